// The `backfill` and `rebackfill` task handlers (docs/architecture.md#backfill, #re-backfill).
// Backfill fills the live generation; re-backfill builds a new generation beside it (queries
// keep answering from the old one), copies the vectors of rows whose text and embedding tag are
// unchanged, and swaps in one transaction. Either starts over as a re-backfill when a PUT moves
// the table's configuration while it runs, so one task at a time converges to the latest one; and
// a backfill of a table whose live generation does not serve its configuration (a re-backfill is
// owed, e.g. after one failed for good) is a re-backfill from the start: only a task building a
// generation for the table's configuration ever writes vectors of that configuration.
import type { Services } from "../../services.ts";
import type { TaskContext } from "../../scheduler/catalog.ts";
import type { FillPayload, FillTaskType } from "../tasks/kinds.ts";
import { generationSpec } from "../vector-tables/render.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { finishFill, markBackfilling, noteError, recordCounts, recordFeedStart, recordSwap, servesConfig } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { vectorAllowance } from "./budget.ts";
import { hashPass } from "./batch.ts";
import { startConsumer, stopConsumer } from "./cdc.ts";
import { completedCounts, fillCounts } from "./counters.ts";
import { keepOnlyGeneration } from "./empty-rows.ts";
import { fill, type FillOutcome, type FillProgress } from "./fill.ts";
import { nothingApplied, type Applied } from "./apply.ts";
import { addApplied, embedderTokens, finishPass, startPass, type Pass } from "./history.ts";
import { dropQuietly } from "./generations.ts";
import { cdcTarget, ensureStorage, openJob, type SyncJob } from "./job.ts";

type Ctx = TaskContext<FillPayload>;

const FRESH: FillProgress = { last_processed_pk: null, rows_processed: 0 };

const interruptedBy = (signal: AbortSignal): string | null => (signal.aborted ? ((signal.reason as { kind?: string } | undefined)?.kind ?? "aborted") : null);

/**
 * One run of a fill task, with its history entry (history.ts): `rebackfill` when the run builds a
 * new generation (whatever the task's type), `backfill` when it fills the live one. A run resumed
 * after a restart gets a new entry, and the one its dead process left `running` is closed then.
 */
export async function runFillTask(services: Services, ctx: Ctx, kind: FillTaskType): Promise<void> {
  const found = await findVectorTableById(services.database.db, ctx.payload.vector_table_id);
  if (!found) return; // deleted since: nothing to fill
  let table: VectorTableRow = found;
  let progress = ctx.progress as FillProgress;
  let rebuild = kind === "rebackfill" || progress.generation !== undefined || !servesConfig(table);
  const pass = await startPass(services, table, rebuild ? "rebackfill" : "backfill");
  try {
    for (;;) {
      const outcome: FillOutcome = rebuild ? await rebackfill(services, ctx, table, progress, pass) : await backfill(services, ctx, table, progress, pass);
      // The configuration moved: start over building the latest one, unless the table is gone.
      const moved = outcome.kind === "done" ? undefined : await findVectorTableById(services.database.db, table.id);
      if (!moved) {
        await finishPass(services, pass, { ok: true });
        return;
      }
      table = moved;
      rebuild = true;
      pass.kind = "rebackfill";
      progress = FRESH;
    }
  } catch (err) {
    const shutdown = interruptedBy(ctx.signal) === "shutdown";
    await finishPass(services, pass, { ok: false, error: shutdown ? new Error("interrupted by a shutdown; the task resumes from its checkpoint") : err });
    if (shutdown) throw err;
    // The table stays as it is while the task retries (docs/vector-tables.md#states); when the runner fails the task
    // for good, the task type's failed hook moves it to `error` in that same transaction.
    await noteError(services.database.db, table.id, err instanceof Error ? err.message : String(err), services.clock.now().toISOString());
    throw err;
  }
}

/** For cdc tables the feed starts before the first read, so nothing between snapshot and stream is lost. */
async function prepareFeed(services: Services, job: SyncJob, fresh: boolean): Promise<void> {
  if (job.table.syncMode !== "cdc" || (!fresh && job.table.cdcCheckpoint)) return;
  const { checkpoint } = await job.source.prepareCdc(cdcTarget(job.table));
  await recordFeedStart(services.database.db, job.table.id, checkpoint, services.clock.now().toISOString());
}

/** Adds what a job's fill (and its closing hash pass) did to the run's entry, and its provider's tokens. */
function tallyJob(pass: Pass, job: SyncJob, filled: Applied, closing: Applied): void {
  pass.totals.scanned += filled.rows;
  addApplied(pass.totals, filled.counts);
  // The closing pass re-reads every row the fill counted: only what it changed is added.
  addApplied(pass.totals, closing.counts, { unchanged: false });
  pass.totals.tokens += embedderTokens(job.embedder);
}

async function backfill(services: Services, ctx: Ctx, table: VectorTableRow, start: FillProgress, pass: Pass): Promise<FillOutcome> {
  const fresh = start.rows_processed === 0 && !start.after_key;
  const progress: FillProgress = { ...start, started_at: start.started_at ?? services.clock.now().toISOString() };
  await markBackfilling(services.database.db, table.id, services.clock.now().toISOString());
  const job = await openJob(services, table);
  const [filled, closing] = [nothingApplied(), nothingApplied()];
  try {
    await ensureStorage(job);
    await prepareFeed(services, job, fresh);
    const total = await job.source.count(table.sourceTable);
    await recordCounts(services.database.db, table.id, await fillCounts(services, job.store, table, total), services.clock.now().toISOString());
    const { live } = await job.store.generations();
    // indexLater: the graph insertion runs in short background steps that set the fill's pace
    // (vector-store later.ts), so searches of the table keep answering while it fills.
    const target = { generation: live, reference: live, budget: { remaining: await vectorAllowance(services, table.orgId) }, indexLater: true };
    const outcome = await fill(job, {
      target,
      progress,
      signal: ctx.signal,
      into: filled,
      checkpoint: async (p) => {
        // Counted once the page's vectors are stored, so synced_rows is the store's, never ahead of it.
        const counts = await fillCounts(services, job.store, table, total);
        await services.database.db.transaction(async (tx) => {
          await ctx.checkpoint(p, tx);
          await recordCounts(tx, table.id, counts, services.clock.now().toISOString());
        });
      },
    });
    if (outcome.kind !== "done") return outcome;
    let rows = outcome.progress.rows_processed;
    // Rows stored before this backfill that the source no longer has: one hash pass removes them.
    if ((await job.store.count()) > rows) rows = (await hashPass(job, target, { signal: ctx.signal, into: closing })).rows;
    await job.store.settle();
    const counts = await completedCounts(services, job.store, table, rows);
    const finished = await finishFill(services.database.db, ctx.complete, { table, counts, startedAt: progress.started_at! }, services.clock.now().toISOString());
    if (!finished) return { kind: "config_moved" };
    services.logger.info({ vector_table_id: table.id, rows, ...outcome.counts }, "backfill completed");
  } finally {
    tallyJob(pass, job, filled, closing);
    await job.close();
  }
  if (table.syncMode === "cdc") startConsumer(services, table.id);
  return { kind: "done", progress, counts: filled.counts };
}

/** The building generation to continue, or a new one (dropping any left by an older configuration). */
async function buildingGeneration(services: Services, ctx: Ctx, job: SyncJob, start: FillProgress): Promise<FillProgress> {
  const { table, store } = job;
  const { building } = await store.generations();
  if (start.generation !== undefined && start.config_version === table.configVersion && building.includes(start.generation)) return start;
  for (const g of building) await dropQuietly(store, g);
  const generation = await store.createGeneration(generationSpec(table));
  // Empty-text rows recorded for generations no longer built (or for an earlier use of this number).
  await keepOnlyGeneration(services.database.db, table.id, (await store.generations()).live);
  const progress: FillProgress = { ...FRESH, generation, config_version: table.configVersion, started_at: services.clock.now().toISOString() };
  await ctx.checkpoint(progress);
  return progress;
}

async function rebackfill(services: Services, ctx: Ctx, table: VectorTableRow, start: FillProgress, pass: Pass): Promise<FillOutcome> {
  const job = await openJob(services, table);
  const [filled, closing] = [nothingApplied(), nothingApplied()];
  let progress: FillProgress;
  try {
    await ensureStorage(job);
    progress = await buildingGeneration(services, ctx, job, start);
    const generation = progress.generation!;
    const { store } = job;
    await prepareFeed(services, job, false);
    const target = { generation, reference: (await store.generations()).live, budget: null, indexLater: true };
    const outcome = await fill(job, { target, progress, signal: ctx.signal, into: filled, checkpoint: (p) => ctx.checkpoint(p) });
    if (outcome.kind !== "done") {
      await dropQuietly(store, generation);
      return outcome;
    }
    // Rows changed while building: one hash pass with the change stream held, then the swap.
    await stopConsumer(services, table.id);
    const { rows } = await hashPass(job, target, { signal: ctx.signal, into: closing });
    await store.swapGeneration(generation);
    await keepOnlyGeneration(services.database.db, table.id, generation);
    const counts = await completedCounts(services, store, table, rows);
    const finished = await finishFill(services.database.db, ctx.complete, { table, counts, startedAt: progress.started_at! }, services.clock.now().toISOString());
    services.logger.info({ vector_table_id: table.id, rows, ...outcome.counts, storage: store.mode }, "re-backfill swapped in");
    if (!finished) {
      // The live generation is the one just built even though a PUT moved on: queries must embed
      // with its model, and the next build starts from it.
      await recordSwap(services.database.db, table, counts, services.clock.now().toISOString());
      return { kind: "config_moved" };
    }
  } finally {
    tallyJob(pass, job, filled, closing);
    await job.close();
  }
  if (table.syncMode === "cdc") startConsumer(services, table.id);
  return { kind: "done", progress, counts: filled.counts };
}
