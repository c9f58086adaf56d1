// Filling a generation from the source in primary-key order with resumable checkpoints: the
// shared loop of backfill (into the live generation) and re-backfill (into a building one).
// Pipelined: the next page's hashes are read while this page embeds, and a page's write and
// checkpoint run while the next page embeds. Pages commit strictly in order.
import type { Key, RowHash } from "../../drivers/sources/types.ts";
import type { TaskProgress } from "../../scheduler/types.ts";
import { keyText } from "../../drivers/sources/types.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { addCounts, nothingApplied, prepareRows, writeRows, type Applied, type ApplyCounts, type ApplyTarget } from "./apply.ts";
import { BudgetExceededError } from "./budget.ts";
import type { SyncJob } from "./job.ts";
import { hashPages } from "./pages.ts";

/**
 * The task's progress (the two fields docs/api.md#tasks shows) plus what a resume needs: the typed key to read
 * after, and for a re-backfill the generation being built and the configuration it is for.
 */
export type FillProgress = TaskProgress & { after_key?: Key | null; generation?: number; config_version?: number; started_at?: string };

export type FillOutcome = { kind: "done"; progress: FillProgress; counts: ApplyCounts } | { kind: "config_moved" };

export type FillOptions = {
  target: ApplyTarget;
  progress: FillProgress;
  signal: AbortSignal;
  /** Persists progress once the page it covers is in the store. */
  checkpoint(progress: FillProgress): Promise<void>;
  /** Counts and rows read, added to as pages go (sync/history.ts): the run's so far even when it fails. */
  into?: Applied;
};

/**
 * Progress past the rows of a page that are stored: all of them, or, when the budget stopped the
 * page, the leading ones before the first row not stored (a later run resumes exactly there).
 */
function advanced(progress: FillProgress, done: RowHash[]): FillProgress {
  if (done.length === 0) return progress;
  const last = done[done.length - 1]!.key;
  return { ...progress, last_processed_pk: keyText(last), after_key: last, rows_processed: progress.rows_processed + done.length };
}

export async function fill(job: SyncJob, opts: FillOptions): Promise<FillOutcome> {
  let progress = { ...opts.progress };
  const into = opts.into ?? nothingApplied();
  const { counts } = into;
  let writing: Promise<void> = Promise.resolve();
  try {
    for await (const page of hashPages(job, progress.after_key ?? null)) {
      const prepared = await prepareRows(job, page, opts.target, { signal: opts.signal });
      into.rows += page.length;
      await writing;
      const next = advanced(progress, page.slice(0, prepared.handled));
      progress = next;
      // The store write and the checkpoint are two transactions: a crash between them replays
      // this page, and prepareRows then finds its rows stored and embeds none of them again.
      writing = prepared.commit(writeRows(job)).then(() => opts.checkpoint(next));
      writing.catch(() => {}); // handled when awaited below; no unhandled rejection meanwhile
      addCounts(counts, prepared.counts);
      if (prepared.overBudget > 0) {
        await writing;
        throw new BudgetExceededError(job.services.config.freeVectorBudget);
      }
      if (opts.signal.aborted) {
        await writing;
        opts.signal.throwIfAborted();
      }
      const row = await findVectorTableById(job.services.database.db, job.table.id);
      if (!row || row.configVersion !== job.table.configVersion) {
        await writing;
        return { kind: "config_moved" };
      }
    }
    await writing;
  } finally {
    await writing.catch(() => {}); // the failure that matters is already thrown
  }
  return { kind: "done", progress, counts };
}
