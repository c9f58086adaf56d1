// Batch sync (docs/architecture.md#batch-sync): a full pass over the source's row hashes, diffed with
// the stored ones, on the sync interval; for cdc tables the same pass reconciles what the change
// stream missed. `runBatchPass` runs one pass now (the tick calls it; so can tests).
import { and, eq, inArray } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { keyText, type RowHash } from "../../drivers/sources/types.ts";
import { tasks } from "../../scheduler/tables.ts";
import { FILL_TASK_TYPES } from "../tasks/kinds.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { markError, noteError, recordCounts, recordPass, servesConfig } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { addCounts, changedRows, prepareRows, zeroCounts, type ApplyCounts, type ApplyTarget } from "./apply.ts";
import { BudgetExceededError, vectorAllowance } from "./budget.ts";
import { failedPassCounts, newTally, passCounts, type PassTally } from "./counters.ts";
import { keepSeenEmptyRows } from "./empty-rows.ts";
import { openJob, type SyncJob } from "./job.ts";
import { hashPages } from "./pages.ts";
import { syncState } from "./state.ts";

/** Passes failing in a row before the table shows `error` (a single blip should not). */
export const FAILURES_BEFORE_ERROR = 3;

export type PassResult = { counts: ApplyCounts; rows: number };

/**
 * Changed rows gathered before they are fetched and embedded together: a pass that finds 1 % of
 * rows changed makes a few full embedding requests, not one small request per page read.
 */
const PASS_FLUSH_ROWS = 512;

/**
 * Every changed source row through `prepareRows`, then every stored row the source no longer has
 * deleted. `tally` (when given) counts the changed rows found and applied, so a pass that fails can
 * say how many it knows are waiting (sync/counters.ts).
 */
export async function hashPass(job: SyncJob, target: ApplyTarget, opts: { signal?: AbortSignal; tally?: PassTally } = {}): Promise<PassResult> {
  const { signal, tally = newTally() } = opts;
  const counts = zeroCounts();
  const seen = new Set<string>();
  let pending: RowHash[] = [];
  const flush = async () => {
    const prepared = await prepareRows(job, pending, target, { signal });
    pending = [];
    await prepared.commit();
    tally.applied += prepared.handled;
    addCounts(counts, prepared.counts);
    if (prepared.overBudget > 0) throw new BudgetExceededError(job.services.config.freeVectorBudget);
  };
  for await (const page of hashPages(job, null)) {
    signal?.throwIfAborted();
    for (const h of page) seen.add(keyText(h.key));
    const { changed, unchanged } = await changedRows(job, page, target);
    counts.unchanged += unchanged;
    tally.found += changed.length;
    pending.push(...changed);
    if (pending.length >= PASS_FLUSH_ROWS) await flush();
  }
  if (pending.length > 0) await flush();
  counts.deleted += await deleteVanished(job, target, seen);
  await keepSeenEmptyRows(job.services.database.db, job.table.id, target.generation, seen);
  return { counts, rows: seen.size };
}

async function deleteVanished(job: SyncJob, target: ApplyTarget, seen: Set<string>): Promise<number> {
  const { vectors } = job.services;
  const gone: string[] = [];
  let afterPk: string | undefined;
  for (;;) {
    const stored = await vectors.hashes(target.collection, { afterPk, limit: 2000, generation: target.generation });
    if (stored.length === 0) break;
    for (const s of stored) if (!seen.has(s.pk)) gone.push(s.pk);
    afterPk = stored[stored.length - 1]!.pk;
  }
  let deleted = 0;
  for (let i = 0; i < gone.length; i += 1000) deleted += await vectors.delete(target.collection, gone.slice(i, i + 1000), { generation: target.generation });
  return deleted;
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
export const passEligible = (t: VectorTableRow) => t.mode === "managed" && (t.syncStatus === "synced" || t.syncStatus === "error") && servesConfig(t);

/**
 * One sync pass over a `synced` (or `error`, so it can recover) managed table with no backfill
 * pending or running. Answers null when the table was not eligible or a pass is already running.
 * Throws the pass's failure after recording it.
 */
export async function runBatchPass(services: Services, tableId: string): Promise<PassResult | null> {
  const state = syncState(services);
  if (state.passes.has(tableId)) return null;
  state.passes.add(tableId);
  try {
    const table = await findVectorTableById(services.database.db, tableId);
    if (!table || !passEligible(table) || (await hasActiveBackfill(services, tableId))) return null;
    return await passOn(services, table);
  } finally {
    state.passes.delete(tableId);
  }
}

async function passOn(services: Services, table: VectorTableRow): Promise<PassResult> {
  const state = syncState(services);
  const startedAt = services.clock.now().toISOString();
  const tally = newTally();
  try {
    const job = await openJob(services, table);
    let result: PassResult;
    try {
      const live = services.vectors.generations(table.vectorstoreCollection).live;
      const budget = { remaining: await vectorAllowance(services, table.orgId) };
      result = await hashPass(job, { collection: table.vectorstoreCollection, generation: live, reference: live, budget }, { tally });
    } finally {
      await job.close();
    }
    state.failures.delete(table.id);
    const finishedAt = services.clock.now().toISOString();
    await recordPass(services.database.db, table.id, { counts: await passCounts(services, table, result.rows), startedAt, finishedAt }, finishedAt);
    const { embedded, metadata, deleted } = result.counts;
    if (embedded + metadata + deleted > 0) {
      const what = table.syncMode === "cdc" ? "cdc reconciliation repaired rows the change stream missed" : "batch sync applied changes";
      services.logger.info({ vector_table_id: table.id, ...result.counts, rows: result.rows }, what);
    }
    return result;
  } catch (err) {
    const failures = (state.failures.get(table.id) ?? 0) + 1;
    state.failures.set(table.id, failures);
    const message = err instanceof Error ? err.message : String(err);
    services.logger.warn({ vector_table_id: table.id, err, failures }, "sync pass failed");
    const at = services.clock.now().toISOString();
    // What is stored, and the changed rows found but not applied (the backlog a failing provider leaves).
    const counts = await failedPassCounts(services, table, tally).catch(() => null);
    if (counts) await recordCounts(services.database.db, table.id, counts, at);
    if (err instanceof BudgetExceededError || failures >= FAILURES_BEFORE_ERROR) await markError(services.database.db, table.id, message, at);
    else await noteError(services.database.db, table.id, message, at);
    throw err;
  }
}
