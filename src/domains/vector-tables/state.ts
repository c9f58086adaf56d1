// A vector table's state and every change to it. vector-tables owns the `vector_tables` table:
// repo.ts holds its creation, reads and deletion; this file holds every write to its status and
// to the numbers the engine keeps on it, each as one named transition. Who moves what: the API
// (this domain's services) moves a table into the states that ask for work; the engine (sync/)
// moves it on to the states that report how the work went, and never out of `paused`.
//
// The API's transitions (org-scoped; each in the transaction that queues the work it asks for):
//   create                             → pending              repo.ts insertVectorTable
//   POST …/backfill        any          → backfilling + task   markBackfillQueued
//   PUT columns/model/dims any          → pending_rebackfill   changeConfiguration (config_version + 1)
//                                          + task (or the active fill task carries it, update.ts)
//   POST …/sync/pause      any but paused → paused             pauseTable   (else 409 already_paused)
//   POST …/sync/resume     paused       → synced               resumeTable  (else 409 not_paused)
//   DELETE                 row removed                          repo.ts deleteVectorTableRow
//
// The engine's transitions (by id; "unless paused" means a paused table stays paused):
//   a backfill starts      → backfilling unless paused                          markBackfilling
//   a fill finishes        → synced unless paused, task completed in the same
//                            commit, only if config_version is still the one built   finishFill
//   a fill fails, retries  status kept, last_error recorded                     noteError
//   a fill failed for good → error unless paused (in the task's failing commit)  markError
//   a batch pass succeeds  synced | error → synced                              recordPass
//   a pass fails           status kept (noteError); the third in a row, or the
//                            budget exhausted: → error unless paused             markError
//   a cdc apply fails      as a pass                                             noteError / markError
//   a consumer applies again after failing   error → synced                      markRecovered
//   a lost feed's resync went through        error → synced                      recordFeedResynced
// and status-free bookkeeping: row counts, the change feed's position, the pending backlog, and
// recordSwap (a swapped-in generation whose PUT moved on before finishFill).
//
// The row counts (`total_rows`, `synced_rows`, `rows_pending`) are never worked out here: every
// transition that writes them takes `RowCounts` computed by the engine in one place,
// sync/counters.ts, from what is stored (docs/vector-tables.md#sync-status).
//
// `config_version` (bumped by the PUT) and `served_config_version` (what the live generation was
// built for: finishFill, recordSwap) tell whether a re-backfill is owed (servesConfig). Every
// engine write names in its WHERE clause what it read (the id, and the statuses or the
// `config_version` it expects) or keeps `paused` in its SET, so a pause, a PUT or a DELETE that
// lands between the engine's read and its write is never overwritten. Times are ISO 8601 strings.
// Each write that can move a table's `synced_through` wakes the queries waiting on it (progress-signal.ts).
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Executor } from "../../db/executor.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import { announceProgress } from "./progress-signal.ts";
import { SYNC_STATUSES } from "./schemas.ts";
import { vectorTables, type SyncStatus, type VectorTableRow } from "./tables.ts";

/**
 * Whether the live generation was built for the table's configuration. When not, a re-backfill is
 * owed and nothing may write the live generation with the current configuration: its vectors have
 * the old model, dimensions or texts (issue 12, item 6).
 */
export const servesConfig = (t: VectorTableRow): boolean => t.configVersion === t.servedConfigVersion;

/**
 * Whether the table has storage the engine can keep in sync: every managed table, and a platform
 * table once its storage is named (`platform_vector_ref`, set when a platform store exists for its
 * provider). Periodic passes and cdc consumers skip the others: their backfill says why they fail.
 */
export const hasStorage = (t: VectorTableRow): boolean => t.mode === "managed" || t.platformVectorRef !== null;

const scoped = (orgId: string, id: string) => and(eq(vectorTables.orgId, orgId), eq(vectorTables.id, id));

/** `status`, unless the table is paused: a paused table stays paused (issue 7 design). */
const unlessPaused = (status: SyncStatus) => sql<SyncStatus>`CASE WHEN ${vectorTables.syncStatus} = 'paused' THEN 'paused' ELSE ${status} END`;

/** A compare-and-set of the status (two racing pauses cannot both succeed); answers whether it moved. */
async function moveSyncStatus(db: Executor, orgId: string, id: string, from: readonly SyncStatus[], next: SyncStatus, at: string): Promise<boolean> {
  const rows = await db
    .update(vectorTables)
    .set({ syncStatus: next, updatedAt: at })
    .where(and(scoped(orgId, id), inArray(vectorTables.syncStatus, [...from])))
    .returning({ id: vectorTables.id });
  return rows.length > 0;
}

// ---- The API's transitions (org-scoped, from this domain's services) ----

/** POST …/backfill, in the transaction that queues the `backfill` task. */
export async function markBackfillQueued(db: Executor, orgId: string, id: string, at: string): Promise<void> {
  await db.update(vectorTables).set({ syncStatus: "backfilling", updatedAt: at }).where(scoped(orgId, id));
}

export type Configuration = Pick<VectorTableRow, "columns" | "embeddingModel" | "embeddingDimensions"> & { name?: string };

/**
 * PUT with new columns, model or dimensions, in the transaction that queues the `rebackfill`:
 * `config_version + 1` in SQL (two racing PUTs make two versions, never one); answers the new value.
 */
export async function changeConfiguration(db: Executor, orgId: string, id: string, config: Configuration, at: string): Promise<number> {
  const [row] = await db
    .update(vectorTables)
    .set({ ...config, syncStatus: "pending_rebackfill", configVersion: sql`${vectorTables.configVersion} + 1`, updatedAt: at })
    .where(scoped(orgId, id))
    .returning({ configVersion: vectorTables.configVersion });
  return row?.configVersion ?? 0;
}

/** POST …/sync/pause: from any state but `paused`; false when already paused. */
export const pauseTable = (db: Executor, orgId: string, id: string, at: string): Promise<boolean> =>
  moveSyncStatus(db, orgId, id, SYNC_STATUSES.filter((s) => s !== "paused"), "paused", at);

/** POST …/sync/resume: only from `paused`; false otherwise. */
export const resumeTable = (db: Executor, orgId: string, id: string, at: string): Promise<boolean> => moveSyncStatus(db, orgId, id, ["paused"], "synced", at);

// ---- The engine's transitions (by id: the engine acts on the ids its tasks and ticks hold) ----

/** A backfill starts filling the live generation. */
export async function markBackfilling(db: Executor, id: string, at: string): Promise<void> {
  await db.update(vectorTables).set({ syncStatus: unlessPaused("backfilling"), updatedAt: at }).where(eq(vectorTables.id, id));
}

/** The numbers a table shows about its rows, as sync/counters.ts computes them. */
export type RowCounts = { totalRows: number; syncedRows: number; rowsPending: number };

/** Thrown inside the finishing transaction to roll it back: a PUT moved the configuration. */
class ConfigMoved extends Error {}

/** What a finished fill built: the table's configuration as it read it, and the row counts after it. */
export type FillDone = { table: Pick<VectorTableRow, "id" | "configVersion" | "embeddingModel" | "embeddingDimensions">; counts: RowCounts; startedAt: string };

/**
 * Ends a fill: the task `completed` and the table `synced` (unless paused) with its numbers, in
 * one transaction, so no reader ever sees one without the other (issue 12). The task is completed
 * first, fenced by its lease; the table only if the configuration is still the one built, else
 * both roll back and the answer is false (the caller then builds the new configuration). The
 * live generation now holds `configVersion`'s vectors: `served_config_version` says so. This
 * guard and the PUT's transaction (update.ts) are what close the PUT → rebackfill hand-off.
 */
export async function finishFill(db: Db, complete: (tx: DbOrTx) => Promise<void>, done: FillDone, at: string): Promise<boolean> {
  const { table, counts, startedAt } = done;
  try {
    await db.transaction(async (tx) => {
      await complete(tx);
      const changed = await tx
        .update(vectorTables)
        .set({
          servingModel: table.embeddingModel,
          servingDimensions: table.embeddingDimensions,
          servedConfigVersion: table.configVersion,
          ...counts,
          lastSyncStartedAt: startedAt,
          lastSyncAt: at,
          lastError: null,
          lastErrorAt: null,
          syncStatus: unlessPaused("synced"),
          updatedAt: at,
        })
        .where(and(eq(vectorTables.id, table.id), eq(vectorTables.configVersion, table.configVersion)))
        .returning({ id: vectorTables.id });
      if (changed.length === 0) throw new ConfigMoved();
    });
    announceProgress(table.id);
    return true;
  } catch (err) {
    if (err instanceof ConfigMoved) return false;
    throw err;
  }
}

/**
 * A re-backfill swapped its generation in but a PUT moved on before finishFill: the live
 * generation is still the one built, so queries embed with its model and the next build starts
 * from it, and the counts are its own. The status stays (the PUT set it; the task goes on building).
 */
export async function recordSwap(db: Executor, table: FillDone["table"], counts: RowCounts, at: string): Promise<void> {
  const changes = { servingModel: table.embeddingModel, servingDimensions: table.embeddingDimensions, servedConfigVersion: table.configVersion, ...counts, updatedAt: at };
  await db.update(vectorTables).set(changes).where(eq(vectorTables.id, table.id));
}

/** A failure for good (or one that keeps coming back): `error` unless paused, with the message. */
export async function markError(db: Executor, id: string, message: string, at: string): Promise<void> {
  await db.update(vectorTables).set({ lastError: message, lastErrorAt: at, syncStatus: unlessPaused("error"), updatedAt: at }).where(eq(vectorTables.id, id));
}

/** A failure that will be retried: recorded, the status kept. */
export async function noteError(db: Executor, id: string, message: string, at: string): Promise<void> {
  await db.update(vectorTables).set({ lastError: message, lastErrorAt: at, updatedAt: at }).where(eq(vectorTables.id, id));
}

/**
 * A batch (or reconciling) pass went through: `synced`, only from `synced` or `error`. A
 * reconciling pass leaves `rows_pending` out: a cdc table's backlog is the stream's.
 */
export async function recordPass(db: Executor, id: string, pass: { counts: Partial<RowCounts>; startedAt: string; finishedAt: string }, at: string): Promise<void> {
  await db
    .update(vectorTables)
    .set({ syncStatus: "synced", lastError: null, lastErrorAt: null, ...pass.counts, lastSyncStartedAt: pass.startedAt, lastSyncAt: pass.finishedAt, updatedAt: at })
    .where(and(eq(vectorTables.id, id), inArray(vectorTables.syncStatus, ["synced", "error"])));
  announceProgress(id);
}

/** A consumer works again after failing (applied a batch, or reopened a broken stream): `error` → `synced`, the failure cleared. */
export async function markRecovered(db: Executor, id: string, at: string): Promise<void> {
  await db
    .update(vectorTables)
    .set({ syncStatus: "synced", lastError: null, lastErrorAt: null, updatedAt: at })
    .where(and(eq(vectorTables.id, id), inArray(vectorTables.syncStatus, ["synced", "error"])));
}

// ---- The engine's bookkeeping: numbers and positions, never the status ----

/**
 * The numbers alone (those given): a backfill counted the source or stored a page (in the
 * transaction of the task's checkpoint), or a pass failed with rows it found still unapplied.
 */
export async function recordCounts(db: Executor, id: string, counts: Partial<RowCounts>, at: string): Promise<void> {
  await db.update(vectorTables).set({ ...counts, updatedAt: at }).where(eq(vectorTables.id, id));
}

/** The change feed a cdc table's consumer will read from, created before the fill's first read. */
export async function recordFeedStart(db: Executor, id: string, checkpoint: string, at: string): Promise<void> {
  await db.update(vectorTables).set({ cdcCheckpoint: checkpoint, updatedAt: at }).where(eq(vectorTables.id, id));
}

/**
 * A lost feed was replaced by a new one (docs/day-two.md#lost-change-feed): its position, and the
 * hash pass now owed (`feed_resync_reason`, cleared by recordFeedResynced), in one write, so a
 * restart mid-pass runs the pass again. The status is kept: the table keeps answering meanwhile.
 */
export async function recordFeedRecreated(db: Executor, id: string, feed: { checkpoint: string; reason: string }, at: string): Promise<void> {
  await db
    .update(vectorTables)
    .set({
      cdcCheckpoint: feed.checkpoint,
      feedResyncReason: feed.reason,
      lastError: `${feed.reason}; recreated the change feed and resynchronizing by hashes`,
      lastErrorAt: at,
      oldestPendingChangeAt: sql`coalesce(${vectorTables.oldestPendingChangeAt}, ${at})`,
      updatedAt: at,
    })
    .where(eq(vectorTables.id, id));
}

/**
 * The owed hash pass after a recreated feed went through: `error` → `synced`. `last_error` keeps
 * saying what happened, in the past tense (sync/status has no other field for words), until the
 * next failure or completed pass replaces it.
 */
export async function recordFeedResynced(db: Executor, id: string, account: string, counts: RowCounts, at: string): Promise<void> {
  await db
    .update(vectorTables)
    .set({
      feedResyncReason: null,
      lastError: account,
      lastErrorAt: at,
      oldestPendingChangeAt: null,
      ...counts,
      syncStatus: sql`CASE WHEN ${vectorTables.syncStatus} = 'error' THEN 'synced' ELSE ${vectorTables.syncStatus} END`,
      updatedAt: at,
    })
    .where(eq(vectorTables.id, id));
  announceProgress(id);
}

/**
 * The stream moved past WAL that held no change of the table: the position is stored before the
 * source is told, so the source's slot is never ahead of what vecsync recorded (an ahead slot
 * means changes vecsync never saw, docs/day-two.md#lost-change-feed).
 */
export async function recordFeedPosition(db: Executor, id: string, checkpoint: string, lagBytes: number | null): Promise<void> {
  await db.update(vectorTables).set({ cdcCheckpoint: checkpoint, sourceLagBytes: lagBytes }).where(eq(vectorTables.id, id));
  announceProgress(id);
}

/** A stream's backlog: its keys (the batch applied and what waits behind it), oldest commit, and the source's bytes past it. */
export type PendingChanges = { rows: number; oldestAt: string; lagBytes: number | null };

/** Changes being applied now: sync/status shows the real backlog meanwhile (docs/vector-tables.md#sync-status, docs/api.md#connections, docs/vector-tables.md). */
export async function notePendingChanges(db: Executor, id: string, pending: PendingChanges, at: string): Promise<void> {
  await db.update(vectorTables).set({ rowsPending: pending.rows, oldestPendingChangeAt: pending.oldestAt, sourceLagBytes: pending.lagBytes, updatedAt: at }).where(eq(vectorTables.id, id));
}

/** Changes whose apply failed stay pending (every one of them); an older pending change already recorded is kept. */
export async function keepPendingChanges(db: Executor, id: string, pending: PendingChanges, at: string): Promise<void> {
  await db
    .update(vectorTables)
    .set({ rowsPending: pending.rows, oldestPendingChangeAt: sql`COALESCE(${vectorTables.oldestPendingChangeAt}, ${pending.oldestAt})`, sourceLagBytes: pending.lagBytes, updatedAt: at })
    .where(eq(vectorTables.id, id));
}

/**
 * Changes applied up to `checkpoint`, committed before the source is acknowledged. `counts`'
 * rows_pending is what the stream holds behind them, `lagBytes` the source's log past them.
 */
export async function recordChangesApplied(db: Executor, id: string, checkpoint: string, counts: RowCounts, at: string, lagBytes: number | null): Promise<void> {
  await db.update(vectorTables).set({ cdcCheckpoint: checkpoint, oldestPendingChangeAt: null, ...counts, sourceLagBytes: lagBytes, lastSyncAt: at, updatedAt: at }).where(eq(vectorTables.id, id));
  announceProgress(id);
}
