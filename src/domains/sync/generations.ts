// What happens to a fill task's table and its building generation when the task fails for good
// (issue 12): the table turns `error` in the transaction that fails the task, so nothing waits as
// `backfilling` for a task that will never run again; the generation the task was building is
// dropped with its files, since no task will ever write it again (a later backfill builds anew).
// A periodic sweep catches the generations whose task died before it could drop them.
import type { TaskFailure } from "../../scheduler/catalog.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import type { Services } from "../../services.ts";
import { VectorStoreError } from "../../drivers/store-api/index.ts";
import { findVectorTableById, vectorTablesByMode } from "../vector-tables/repo.ts";
import { hasStorage, markError, servesConfig } from "../vector-tables/state.ts";
import { tableStore, type TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { hasActiveBackfill } from "./batch.ts";

/** Drops a building generation; one another party dropped first is already what we wanted. */
export async function dropQuietly(store: TableStore, generation: number): Promise<void> {
  try {
    await store.dropGeneration(generation);
  } catch (err) {
    if (!(err instanceof VectorStoreError && err.code === "generation_not_found")) throw err;
  }
}

/**
 * The fill task types' failed hook: `error` with the task's last error (a paused table stays
 * paused). The live generation is untouched and keeps answering queries (docs/vector-tables.md#configuration-changes).
 */
export async function fillFailed(services: Services, tx: DbOrTx, failure: TaskFailure): Promise<void> {
  const table = await findVectorTableById(tx, failure.task.targetId);
  if (!table) return; // deleted meanwhile: nothing to mark
  await markError(tx, table.id, fillFailureMessage(table, failure), services.clock.now().toISOString());
}

/**
 * `last_error` of a fill that failed for good. A fill of the configuration the live generation
 * serves (a first backfill, a resumed one) says enough with its own error. A build of a new
 * configuration (a re-backfill, or a backfill while one is owed) fails while older vectors may
 * serve: the message names the configuration that failed, the cause, and what queries now use.
 */
export function fillFailureMessage(table: VectorTableRow, failure: TaskFailure): string {
  if (servesConfig(table)) return failure.error;
  const to: string[] = [];
  if (table.embeddingModel !== table.servingModel) to.push(`model ${table.embeddingModel}`);
  if (table.embeddingDimensions !== table.servingDimensions) to.push(`${table.embeddingDimensions} dimensions`);
  const target = to.length > 0 ? `to ${to.join(" at ")}` : "for the new columns";
  // last_sync_at is set by every fill or pass that completed: the live generation was served whole.
  const queries = table.lastSyncAt === null ? "Nothing was served before it" : `Queries are answered from the previous vectors (${table.servingModel}, ${table.servingDimensions} dimensions)`;
  return `the re-backfill ${target} failed: ${failure.error}. ${queries}; POST …/backfill tries again`;
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
 * Platform tables too, each in its own database: one that cannot be reached is tried next minute.
 */
export async function dropOrphanGenerations(services: Services): Promise<void> {
  const tables = await vectorTablesByMode(services.database.db, "managed");
  for (const table of tables) {
    if (services.vectors.hasCollection(table.vectorstoreCollection)) await dropUnowned(services, table);
  }
  for (const table of await vectorTablesByMode(services.database.db, "platform")) {
    if (!hasStorage(table)) continue;
    await dropUnowned(services, table).catch((err) => services.logger.warn({ err, vector_table_id: table.id }, "could not sweep a platform table's building generations"));
  }
}

async function dropUnowned(services: Services, table: VectorTableRow): Promise<void> {
  if (!hasStorage(table)) return;
  const store = await tableStore(services, table);
  if (!(await store.exists())) return;
  // Listed before the check: a task that becomes active after the check creates a generation
  // not listed here, and one listed was created by a task that is no longer active.
  const { building } = await store.generations();
  if (building.length === 0 || (await hasActiveBackfill(services, table.id))) return;
  for (const g of building) await dropQuietly(store, g);
  services.logger.info({ vector_table_id: table.id, generations: building }, "dropped building generations no task owns");
}
