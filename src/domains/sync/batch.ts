// Batch sync (docs/architecture.md#batch-sync): a full pass over the source's row hashes, diffed with
// the stored ones, on the sync interval; for cdc tables the same pass reconciles what the change
// stream missed, on the reconcile interval (lifecycle.ts passDue). `runBatchPass` runs one pass
// now (the tick calls it; so can tests); POST …/sync takes the same slot (`claimPass`) and runs the
// same pass (`runPass`) without waiting for it (service.ts). Each pass has a history entry (history.ts).
import { and, eq, inArray } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { FETCH_CHUNK, keyText, type RowHash } from "../../drivers/sources/types.ts";
import { tasks } from "../../scheduler/tables.ts";
import { FILL_TASK_TYPES } from "../tasks/kinds.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { hasStorage, markError, noteError, recordCounts, recordPass, servesConfig } from "../vector-tables/state.ts";
import { tableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { addCounts, changedRows, nothingApplied, type Applied, type ApplyCounts, type ApplyTarget } from "./apply.ts";
import { applyKeys, storedKey } from "./apply-keys.ts";
import { BudgetExceededError, vectorAllowance } from "./budget.ts";
import { failedPassCounts, newTally, passCounts, type PassTally } from "./counters.ts";
import { keepSeenEmptyRows } from "./empty-rows.ts";
import { openJob, type SyncJob } from "./job.ts";
import { hashPages, PAGE_SIZE } from "./pages.ts";
import { syncState } from "./state.ts";
import { addApplied, embedderTokens, finishPass, startPass, type Pass } from "./history.ts";
import type { PassKind } from "./tables.ts";

/** Passes failing in a row before the table shows `error` (a single blip should not). */
export const FAILURES_BEFORE_ERROR = 3;

export type PassResult = Applied;

/**
 * Changed rows gathered before they are fetched and embedded together: a pass that finds 1 % of
 * rows changed makes a few full embedding requests, not one small request per page read.
 */
const PASS_FLUSH_ROWS = 512;

/**
 * Source hashes read at once, compared with the stored ones PAGE_SIZE rows at a time with a turn
 * of the loop between (shared/foreground.ts). A read is a round trip whose answer waits for the
 * loop: under four clients querying without pause a 100k-row pass read in pages of 256 waited
 * ~17 ms a page, 6.6 s of its 9.4 s.
 */
const PASS_READ_ROWS = 2048;

/**
 * Every changed source row through `applyKeys`, then every stored row the source no longer has
 * deleted. The hash pages are read without the table's write lock (a change stream may write
 * meanwhile); each flush re-reads its rows' hashes under it, so what it writes is never older
 * than what the stream wrote. `tally` (when given) counts the changed rows found and applied, so
 * a pass that fails can say how many it knows are waiting (sync/counters.ts); `into` (when given)
 * is the result, filled in as the pass goes, so a pass that fails can say what it did (history.ts).
 */
export async function hashPass(job: SyncJob, target: ApplyTarget, opts: { signal?: AbortSignal; tally?: PassTally; into?: Applied } = {}): Promise<PassResult> {
  const { signal, tally = newTally(), into = nothingApplied() } = opts;
  const { counts } = into;
  const seen = new Set<string>();
  let pending: RowHash[] = [];
  const flush = async () => {
    // A batch table's backlog while it is applied: the changed rows found and not yet stored, so a
    // pass waiting on a failing provider shows them at once (CONTRACT 11), not only once it failed.
    if (job.table.syncMode === "batch") await recordCounts(job.services.database.db, job.table.id, { rowsPending: tally.found - tally.applied }, job.services.clock.now().toISOString());
    const applied = await applyKeys(job, pending.map((h) => h.key), target, { signal });
    pending = [];
    tally.applied += applied.handled;
    addCounts(counts, applied.counts);
    if (applied.overBudget > 0) throw new BudgetExceededError(job.services.config.freeVectorBudget);
  };
  for await (const read of hashPages(job, null, PASS_READ_ROWS)) {
    for (let from = 0; from < read.length; from += PAGE_SIZE) {
      if (from > 0) await job.services.foreground.turn();
      signal?.throwIfAborted();
      const page = read.slice(from, from + PAGE_SIZE);
      for (const h of page) seen.add(keyText(h.key));
      into.rows = seen.size;
      const { changed, unchanged } = await changedRows(job, page, target);
      counts.unchanged += unchanged;
      tally.found += changed.length;
      pending.push(...changed);
      if (pending.length >= PASS_FLUSH_ROWS) await flush();
    }
  }
  if (pending.length > 0) await flush();
  await reapplyUnseen(job, target, seen, counts);
  into.rows = seen.size;
  await keepSeenEmptyRows(job.services.database.db, job.table.id, target.generation, seen);
  return into;
}

/**
 * Stored rows the pages did not list: deleted at the source, or inserted by the change stream
 * after the pass read past their key. `applyKeys` tells which under the write lock (deletes the
 * first, finds the second unchanged); the second join `seen` (the pass's row count).
 */
async function reapplyUnseen(job: SyncJob, target: ApplyTarget, seen: Set<string>, counts: ApplyCounts): Promise<void> {
  const unseen: string[] = [];
  let afterPk: string | undefined;
  for (;;) {
    const stored = await job.store.hashes({ afterPk, limit: 2000, generation: target.generation });
    if (stored.length === 0) break;
    for (const s of stored) if (!seen.has(s.pk)) unseen.push(s.pk);
    afterPk = stored[stored.length - 1]!.pk;
    await job.services.foreground.turn(); // each read holds the loop (libSQL is synchronous); a table's worth at once, ~300 ms at 100k rows
  }
  for (let i = 0; i < unseen.length; i += FETCH_CHUNK) {
    const applied = await applyKeys(job, unseen.slice(i, i + FETCH_CHUNK).map((pk) => storedKey(job.table, pk)), target);
    addCounts(counts, applied.counts);
    for (const pk of applied.present) seen.add(pk);
    if (applied.overBudget > 0) throw new BudgetExceededError(job.services.config.freeVectorBudget);
  }
}

export async function hasActiveBackfill(services: Services, tableId: string): Promise<boolean> {
  const rows = await services.database.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.targetId, tableId), inArray(tasks.taskType, [...FILL_TASK_TYPES]), inArray(tasks.status, ["pending", "running"])))
    .limit(1);
  return rows.length > 0;
}

/** Not while a re-backfill is owed: a pass writes the live generation with the table's configuration. */
export const passEligible = (t: VectorTableRow) => hasStorage(t) && (t.syncStatus === "synced" || t.syncStatus === "error") && servesConfig(t);

/** A pass's kind in the history: a cdc table's pass reconciles what its stream missed. */
export const passKind = (t: Pick<VectorTableRow, "syncMode">): PassKind => (t.syncMode === "cdc" ? "reconcile" : "batch");

/**
 * Takes the table's one pass slot (sync/state.ts `passes`), synchronously, so a tick and a
 * POST …/sync asking at the same moment cannot both get it; null when a pass holds it. The
 * answer releases it.
 */
export function claimPass(services: Services, tableId: string): (() => void) | null {
  const state = syncState(services);
  if (state.passes.has(tableId)) return null;
  state.passes.add(tableId);
  return () => void state.passes.delete(tableId);
}

/**
 * One sync pass over a `synced` (or `error`, so it can recover) table with no backfill pending or
 * running. Answers null when the table was not eligible or a pass is already running. Throws the
 * pass's failure after recording it.
 */
export async function runBatchPass(services: Services, tableId: string): Promise<PassResult | null> {
  const release = claimPass(services, tableId);
  if (!release) return null;
  try {
    const table = await findVectorTableById(services.database.db, tableId);
    if (!table || !passEligible(table) || (await hasActiveBackfill(services, tableId))) return null;
    return await runPass(services, table, await startPass(services, table, passKind(table)));
  } finally {
    release();
  }
}

/** The pass itself, its slot held by the caller and its history entry open: recorded on the table and in the entry. */
export async function runPass(services: Services, table: VectorTableRow, pass: Pass): Promise<PassResult> {
  const state = syncState(services);
  const startedAt = services.clock.now().toISOString();
  const tally = newTally();
  const into = nothingApplied();
  try {
    const job = await openJob(services, table);
    try {
      const { live } = await job.store.generations();
      const budget = { remaining: await vectorAllowance(services, table.orgId) };
      // indexLater: the graph's insertions off the loop, as a fill's (vector-store later.ts); 512
      // changed rows inserted on the loop held it ~250 ms at 100k rows.
      await hashPass(job, { generation: live, reference: live, budget, indexLater: true }, { tally, into });
      await job.store.settle(); // a table whose first backfill never completed gets its index once a pass has filled it
    } finally {
      pass.totals.tokens += embedderTokens(job.embedder);
      await job.close();
    }
    state.failures.delete(table.id);
    const finishedAt = services.clock.now().toISOString();
    await recordPass(services.database.db, table.id, { counts: await passCounts(services, job.store, table, into.rows), startedAt, finishedAt }, finishedAt);
    const { embedded, metadata, deleted } = into.counts;
    if (embedded + metadata + deleted > 0) {
      const what = table.syncMode === "cdc" ? "cdc reconciliation repaired rows the change stream missed" : "batch sync applied changes";
      services.logger.info({ vector_table_id: table.id, ...into.counts, rows: into.rows }, what);
    }
    await finishPass(services, withApplied(pass, into), { ok: true });
    return into;
  } catch (err) {
    try {
      await recordFailure(services, table, err, tally);
    } finally {
      await finishPass(services, withApplied(pass, into), { ok: false, error: err });
    }
    throw err;
  }
}

/** A failed pass on the table: its counts, and `last_error` (`error` on the third in a row, or the budget). */
async function recordFailure(services: Services, table: VectorTableRow, err: unknown, tally: PassTally): Promise<void> {
  const state = syncState(services);
  const failures = (state.failures.get(table.id) ?? 0) + 1;
  state.failures.set(table.id, failures);
  const message = err instanceof Error ? err.message : String(err);
  services.logger.warn({ vector_table_id: table.id, err, failures }, "sync pass failed");
  const at = services.clock.now().toISOString();
  // What is stored, and the changed rows found but not applied (the backlog a failing provider leaves).
  const counts = await tableStore(services, table)
    .then((store) => failedPassCounts(services, store, table, tally))
    .catch(() => null);
  if (counts) await recordCounts(services.database.db, table.id, counts, at);
  if (err instanceof BudgetExceededError || failures >= FAILURES_BEFORE_ERROR) await markError(services.database.db, table.id, message, at);
  else await noteError(services.database.db, table.id, message, at);
}

/** The pass's entry with what the hash pass did (so far). */
function withApplied(pass: Pass, applied: Applied): Pass {
  pass.totals.scanned = applied.rows;
  addApplied(pass.totals, applied.counts);
  return pass;
}
