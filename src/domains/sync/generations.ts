// What happens to a fill task's table and its building generation when the task fails for good
// (issue 12): the table turns `error` in the transaction that fails the task, so nothing waits as
// `backfilling` for a task that will never run again; the generation the task was building is
// dropped with its files, since no task will ever write it again (a later backfill builds anew).
// A periodic sweep catches the generations whose task died before it could drop them.
import type { TaskFailure } from "../../scheduler/catalog.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import type { Services } from "../../services.ts";
import { VectorStoreError } from "../../drivers/vector-store/index.ts";
import { findVectorTableById, vectorTablesByMode } from "../vector-tables/repo.ts";
import { markError } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { hasActiveBackfill } from "./batch.ts";

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
 * paused). The live generation is untouched and keeps answering queries (docs/vector-tables.md#configuration-changes).
 */
export async function fillFailed(services: Services, tx: DbOrTx, failure: TaskFailure): Promise<void> {
  await markError(tx, failure.task.targetId, failure.error, services.clock.now().toISOString());
}

/**
 * After the failure committed: drops the table's building generations, unless a newer fill task
 * is already active (it owns them now, and drops strays itself before building).
 */
export async function dropFailedGenerations(services: Services, failure: TaskFailure): Promise<void> {
  const table = await findVectorTableById(services.database.db, failure.task.targetId);
  if (table) await dropUnowned(services, table);
}

/**
 * The catch-all, run every minute: building generations no active fill task owns
 * (their task failed and the process died before dropping them, or was killed mid-creation).
 */
export async function dropOrphanGenerations(services: Services): Promise<void> {
  const tables = await vectorTablesByMode(services.database.db, "managed");
  for (const table of tables) {
    if (services.vectors.hasCollection(table.vectorstoreCollection)) await dropUnowned(services, table);
  }
}

async function dropUnowned(services: Services, table: VectorTableRow): Promise<void> {
  if (table.mode !== "managed") return;
  const collection = table.vectorstoreCollection;
  // Listed before the check: a task that becomes active after the check creates a generation
  // not listed here, and one listed was created by a task that is no longer active.
  const { building } = services.vectors.generations(collection);
  if (building.length === 0 || (await hasActiveBackfill(services, table.id))) return;
  for (const g of building) await dropQuietly(services, collection, g);
  services.logger.info({ vector_table_id: table.id, generations: building }, "dropped building generations no task owns");
}
