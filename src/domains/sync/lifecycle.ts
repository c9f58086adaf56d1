// Starting and stopping sync around a table's life: the periodic ticks that drive batch passes
// and keep CDC consumers running for the tables that want them, `stopSyncFor` for DELETE, and
// the engine as the vector-tables API reaches it (`tableEngine`, services.engine).
import type { Services } from "../../services.ts";
import type { TableEngine } from "../vector-tables/engine.ts";
import { vectorTablesBySyncMode, vectorTablesInStatus } from "../vector-tables/repo.ts";
import { hasStorage } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { passEligible, runBatchPass } from "./batch.ts";
import { consumerWanted, startConsumer, stopConsumer } from "./cdc.ts";
import { forgetEmptyRows } from "./empty-rows.ts";
import { forgetPasses } from "./repo.ts";
import { cdcTarget, openTableSource } from "./job.ts";
import { resumeFrom } from "./resume.ts";
import { syncState } from "./state.ts";

/** croner pattern for "every n seconds" (whole minutes past 59 s). */
export function intervalPattern(seconds: number): string {
  if (seconds < 60) return `*/${seconds} * * * * *`;
  const minutes = Math.max(1, Math.min(59, Math.round(seconds / 60)));
  return `0 */${minutes} * * * *`;
}

/**
 * Whether a table's pass is due at this tick: a batch table's every sync interval; a cdc table's
 * (a reconciling pass: its stream applies the changes) once its last completed pass, or its
 * backfill, started a reconcile interval ago (`last_sync_started_at`), and its last attempt too
 * (a failing pass is not retried every tick: each attempt reads the whole source).
 */
export function passDue(services: Services, table: VectorTableRow): boolean {
  if (table.syncMode !== "cdc") return true;
  const intervalMs = services.config.reconcileIntervalSec * 1000;
  const now = services.clock.now().getTime();
  const completed = table.lastSyncStartedAt ? Date.parse(table.lastSyncStartedAt) : -Infinity;
  const attempted = syncState(services).reconcileAttempts.get(table.id) ?? -Infinity;
  return now - Math.max(completed, attempted) >= intervalMs;
}

/** One batch pass, or for a cdc table a reconciling one when due, per eligible table, one table at a time. */
export async function syncTick(services: Services): Promise<void> {
  const tables = await vectorTablesInStatus(services.database.db, ["synced", "error"]);
  for (const table of tables) {
    if (!services.scheduler.running) return;
    if (!passEligible(table) || !passDue(services, table)) continue;
    if (table.syncMode === "cdc") syncState(services).reconcileAttempts.set(table.id, services.clock.now().getTime());
    await runBatchPass(services, table.id).catch(() => {}); // recorded on the table by the pass
  }
}

/** Starts the consumers that should run and stops those whose table paused or went away. */
export async function consumersTick(services: Services): Promise<void> {
  const state = syncState(services);
  const tables = await vectorTablesBySyncMode(services.database.db, "cdc");
  const wanted = new Set<string>();
  for (const table of tables) {
    // `error` tables keep a running consumer (it recovers by itself) but do not get a new one.
    if (consumerWanted(table) && (table.syncStatus !== "error" || state.consumers.has(table.id))) wanted.add(table.id);
  }
  for (const id of state.consumers.keys()) if (!wanted.has(id)) await stopConsumer(services, id);
  for (const id of wanted) startConsumer(services, id);
}

/** Called right after a resume (or any change that should restart sync): no need to wait for a tick. */
export function startSyncFor(services: Services, table: VectorTableRow): void {
  syncState(services).retired.delete(table.id);
  if (consumerWanted(table)) startConsumer(services, table.id);
}

/**
 * Before a vector table is deleted: stops its consumer for good (`retired`: until a resume) and
 * frees the change feed the source keeps for it (slot and publication). Best effort: an
 * unreachable source is logged, never blocks.
 */
export async function stopSyncFor(services: Services, table: VectorTableRow): Promise<void> {
  const state = syncState(services);
  state.retired.add(table.id);
  await stopConsumer(services, table.id);
  state.failures.delete(table.id);
  state.reconcileAttempts.delete(table.id);
  if (table.syncMode !== "cdc" || !hasStorage(table)) return;
  try {
    const source = await openTableSource(services, table);
    try {
      await source.teardownCdc(cdcTarget(table));
    } finally {
      await source.close().catch(() => {});
    }
  } catch (err) {
    services.logger.warn({ err, vector_table_id: table.id }, "could not free the source's change feed");
  }
}

/**
 * At shutdown, before the database closes: every change stream's sync history written now
 * (docs/vector-tables.md#sync-history). The consumers themselves stop on their own once the
 * scheduler has stopped, possibly after the database is gone; what they apply meanwhile is
 * kept by the source's feed and by their checkpoints, not by their history.
 */
export async function flushSyncHistory(services: Services): Promise<void> {
  await Promise.all([...syncState(services).consumers.values()].map((c) => c.closeHistory()));
}

/** Stops every consumer (shutdown); they also stop by themselves once the scheduler stops. */
export async function stopAllSync(services: Services): Promise<void> {
  const state = syncState(services);
  state.stopped = true;
  await Promise.all([...state.consumers.keys()].map((id) => stopConsumer(services, id)));
}

/** The calls the vector-tables API makes into the engine; `services` is read when one is made. */
export function tableEngine(services: () => Services): TableEngine {
  return {
    stop: (table) => stopSyncFor(services(), table),
    resumed: (table) => startSyncFor(services(), table),
    resumePoint: (db, table) => resumeFrom(db, table),
    forget: async (db, table) => {
      await forgetEmptyRows(db, table.id);
      await forgetPasses(db, table.id);
    },
  };
}
