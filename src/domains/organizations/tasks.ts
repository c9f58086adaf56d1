import type { Services } from "../../services.ts";
import { ORG_DELETION } from "../tasks/kinds.ts";
import { deleteOrganizationData } from "./deletion.ts";

/** Deleting an organization's external resources can be slow (many collections); a run may take this long. */
const ORG_DELETION_TIMEOUT_MS = 10 * 60_000;

export function registerOrganizationTasks(services: Services): void {
  services.tasks.register(ORG_DELETION, {
    timeoutMs: ORG_DELETION_TIMEOUT_MS,
    handler: ({ task, payload }) => deleteOrganizationData(services, payload.organization_id, { runningTaskId: task.id }),
  });
}
