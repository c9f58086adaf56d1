// Closes a window in the PUT → rebackfill hand-off. A PUT whose rebackfill collides with an active
// backfill/rebackfill leaves the change to that task, which re-reads `config_version` and starts
// over. But a task that has already made its final version check (table marked synced) and is only
// waiting for the runner to mark it completed will not look again: the PUT's change would stay
// `pending_rebackfill` with no task. This sweep queues the missing rebackfill; the exclusive key
// keeps it from ever doubling one that exists.
import { and, eq, inArray, notExists } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { tasks } from "../../scheduler/tables.ts";
import { vectorTables } from "./tables.ts";
import { backfillKey, type BackfillPayload } from "./update.ts";

/** How often the sweep runs (croner, with seconds): a lost change waits at most this long. */
export const REBACKFILL_SWEEP_PATTERN = "*/15 * * * * *";

/** Queues a rebackfill for every `pending_rebackfill` table that has no active fill task. */
export async function enqueueMissingRebackfills(services: Services): Promise<number> {
  const db = services.database.db;
  const active = db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.targetId, vectorTables.id), inArray(tasks.status, ["pending", "running"]), inArray(tasks.taskType, ["backfill", "rebackfill"])));
  const orphans = await db.select().from(vectorTables).where(and(eq(vectorTables.syncStatus, "pending_rebackfill"), notExists(active)));
  let queued = 0;
  for (const table of orphans) {
    const payload: BackfillPayload = { vector_table_id: table.id, config_version: table.configVersion };
    try {
      await services.tasks.enqueue(db, { orgId: table.orgId, taskType: "rebackfill", targetId: table.id, payload, exclusiveKey: backfillKey(table.id) });
      queued++;
      services.logger.info({ org_id: table.orgId, vector_table_id: table.id }, "queued a rebackfill a PUT's change was waiting for");
    } catch (err) {
      if (!isUniqueViolation(err)) throw err; // a task appeared meanwhile: nothing is missing
    }
  }
  return queued;
}

/** Called once from buildServices. */
export function registerRebackfillSweep(services: Services): void {
  services.tasks.every("rebackfill-sweep", REBACKFILL_SWEEP_PATTERN, async () => void (await enqueueMissingRebackfills(services)));
}
