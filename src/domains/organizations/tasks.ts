import { type } from "arktype";
import type { Services } from "../../services.ts";
import { deleteOrganizationData } from "./deletion.ts";

/** Deleting an organization's external resources can be slow (many collections); a run may take this long. */
const ORG_DELETION_TIMEOUT_MS = 10 * 60_000;

export function registerOrganizationTasks(services: Services): void {
  services.tasks.register({
    taskType: "org_deletion",
    timeoutMs: ORG_DELETION_TIMEOUT_MS,
    payload: type({ organization_id: "string" }),
    handler: ({ task, payload }) => deleteOrganizationData(services, payload.organization_id, { runningTaskId: task.id }),
  });
}
