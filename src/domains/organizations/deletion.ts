import { and, eq, ne } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { tasks } from "../../scheduler/tables.ts";
import { deleteOrganizationApiKeys } from "../api-keys/repo.ts";
import { deleteOrganizationEnvironments } from "../environments/repo.ts";
import { deleteOrganizationInvitations, deleteOrganizationMembers, deleteOrganizationRow } from "./repo.ts";

// The `org_deletion` task (docs/api.md#organizations): external resources first (vector-store collections,
// platform tables), then the database records, then the organization itself. Every step is
// idempotent, so a task retried after a crash — or run twice — simply finds less to do. What the
// domains that come later (embedding providers, connections, vector tables) remove is listed in
// src/wiring.ts (services.dependents.organization); this file never imports them.

/**
 * Deletes everything of the organization. `runningTaskId` is the org_deletion task executing
 * this: its own row stays so the scheduler can mark it completed.
 */
export async function deleteOrganizationData(services: Services, orgId: string, opts: { runningTaskId?: string } = {}): Promise<void> {
  const cleaners = services.dependents.organization;
  for (const cleaner of cleaners) {
    if (cleaner.external) await cleaner.external(orgId);
  }
  await services.database.db.transaction(async (tx) => {
    for (const cleaner of cleaners) {
      if (cleaner.records) await cleaner.records(tx, orgId);
    }
    await deleteOrganizationInvitations(tx, orgId);
    await deleteOrganizationApiKeys(tx, orgId);
    await deleteOrganizationEnvironments(tx, orgId);
    await deleteOrganizationMembers(tx, orgId);
    const otherTasks = opts.runningTaskId ? and(eq(tasks.orgId, orgId), ne(tasks.id, opts.runningTaskId)) : eq(tasks.orgId, orgId);
    await tx.delete(tasks).where(otherTasks);
    await deleteOrganizationRow(tx, orgId);
  });
  services.logger.info({ org_id: orgId }, "organization deleted");
}
