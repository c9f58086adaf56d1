// What happens to a fill task's table and its building generation when the task fails for good
// (issue 12): the table turns `error` in the transaction that fails the task, so nothing waits as
// `backfilling` for a task that will never run again; the generation the task was building is
// dropped with its files, since no task will ever write it again (a later backfill builds anew).
import type { TaskFailure } from "../../scheduler/catalog.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import type { Services } from "../../services.ts";
import { VectorStoreError } from "../../drivers/vector-store/index.ts";
import { hasActiveBackfill } from "./batch.ts";
import { loadTable } from "./job.ts";
import { markError } from "./status.ts";

/** Drops a building generation; one another party dropped first is already what we wanted. */
export async function dropQuietly(services: Services, collection: string, generation: number): Promise<void> {
  try {
    await services.vectors.dropGeneration(collection, generation);
  } catch (err) {
    if (!(err instanceof VectorStoreError && err.code === "generation_not_found")) throw err;
  }
}

/**
 * The fill task types' failed hook: `error` with the task's last error (a paused table stays
 * paused). The live generation is untouched and keeps answering queries (CONTRACT 7).
 */
export async function fillFailed(services: Services, tx: DbOrTx, failure: TaskFailure): Promise<void> {
  await markError(services, failure.task.targetId, failure.error, tx);
}

/**
 * After the failure committed: drops the table's building generations, unless a newer fill task
 * is already active (it owns them now, and drops strays itself before building). A crash before
 * this runs leaves the generation to that next fill's own clean-up.
 */
export async function dropFailedGenerations(services: Services, failure: TaskFailure): Promise<void> {
  const table = await loadTable(services, failure.task.targetId);
  if (!table || table.mode !== "managed") return;
  const collection = table.vectorstoreCollection;
  // Listed before the check: a task started after the check creates a generation not listed here.
  const { building } = services.vectors.generations(collection);
  if (building.length === 0 || (await hasActiveBackfill(services, table.id))) return;
  for (const g of building) await dropQuietly(services, collection, g);
  services.logger.info({ vector_table_id: table.id, generations: building }, "dropped the generation of a failed re-backfill");
}
