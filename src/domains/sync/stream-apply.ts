// Applying what a cdc table's change stream delivers to the live generation (docs/architecture.md#cdc):
// one batch of changed keys (apply-keys.ts), or, when the feed was lost or a batch says every row changed, a
// hash pass. The consumer loop (cdc.ts) decides when; this file decides how.
import type { ChangeBatch } from "../../drivers/sources/types.ts";
import { writesOnLoop } from "../../shared/write-place.ts";
import type { Applied } from "./apply.ts";
import { applyKeys } from "./apply-keys.ts";
import { BudgetExceededError, vectorAllowance } from "./budget.ts";
import { hashPass, type PassResult } from "./batch.ts";
import type { SyncJob } from "./job.ts";

async function liveTarget(job: SyncJob) {
  const { live } = await job.store.generations();
  return { generation: live, reference: live };
}

/** Applies one batch; answers what it did, the rows it read being the batch's keys (or, for a hash pass, every source row). */
export async function applyBatch(job: SyncJob, batch: ChangeBatch): Promise<Applied> {
  if (batch.allRowsChanged) return resync(job);
  const budget = { remaining: await vectorAllowance(job.services, job.table.orgId) };
  // By their real hashes: a change to no synced column costs nothing, a metadata-only one is a
  // metadata update, and the next reconciling pass finds every row stored here unchanged.
  // Searchable as soon as stored; the index catches up in the background (commit → queryable).
  // Its writes stay on the event loop: the write thread's hand-off would add to commit → queryable.
  const target = { ...(await liveTarget(job)), budget, indexLater: true, streaming: true };
  const applied = await writesOnLoop(() => applyKeys(job, batch.keys, target));
  if (applied.overBudget > 0) throw new BudgetExceededError(job.services.config.freeVectorBudget);
  return { counts: applied.counts, rows: batch.keys.length };
}

/** A hash pass over the live generation: what a recreated feed owes, and what a TRUNCATE calls for. */
export async function resync(job: SyncJob): Promise<PassResult> {
  const budget = { remaining: await vectorAllowance(job.services, job.table.orgId) };
  return hashPass(job, { ...(await liveTarget(job)), budget });
}
