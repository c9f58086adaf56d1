// CDC (docs/architecture.md#cdc): one consumer per cdc table applies the source's change stream to the
// live generation. Each batch's keys are re-read (absent = deleted), rendered, embedded and
// written; only then is the position stored on the table and acknowledged to the source, so a
// crash replays at most the batch in flight. A lost feed falls back to a full hash pass.
import type { Services } from "../../services.ts";
import { CdcFeedLostError, keyText, type ChangeBatch, type ChangeStream } from "../../drivers/sources/types.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { keepPendingChanges, markError, markRecovered, noteError, notePendingChanges, recordChangesApplied, recordFeedResync, servesConfig } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { BudgetExceededError } from "./budget.ts";
import { streamCounts, streamPending } from "./counters.ts";
import { FAILURES_BEFORE_ERROR } from "./batch.ts";
import { cdcTarget, openJob, type SyncJob } from "./job.ts";
import { applyBatch, resync } from "./stream-apply.ts";
import { syncState, type Consumer } from "./state.ts";

/** Statuses in which a consumer keeps applying changes, as long as the live generation serves the configuration. */
const CONSUMING = new Set(["synced", "error", "pending_rebackfill"]);
const MAX_BACKOFF_MS = 30_000;
/** Keys merged into one apply at most: one embed call's worth, one store write. */
const MAX_COALESCED_KEYS = 2048;

const PENDING = Symbol("pending");

/** The result if it is ready once the microtasks queued now have run (a queued batch is), else PENDING. */
const ifReady = <T>(p: Promise<T>) => Promise.race([p, new Promise<typeof PENDING>((resolve) => setImmediate(() => resolve(PENDING)))]);

/**
 * The stream's batches, with every batch already waiting merged into the one before it: under a
 * steady flow of small transactions one apply (fetch, embed, write, checkpoint) covers many of
 * them instead of paying its fixed cost per transaction. The next batch is always requested
 * while the current one applies. Checkpoints only grow, so the merged batch's is its last one's.
 */
export async function* coalesced(stream: AsyncIterable<ChangeBatch>, maxKeys = MAX_COALESCED_KEYS): AsyncGenerator<ChangeBatch> {
  const it = stream[Symbol.asyncIterator]();
  const request = () => {
    const p = it.next();
    p.catch(() => {}); // observed when awaited; a session that ends early must not leave it unhandled
    return p;
  };
  let ahead = request();
  for (;;) {
    const first = await ahead;
    if (first.done) return;
    ahead = request();
    const keys = new Map(first.value.keys.map((k) => [keyText(k), k]));
    const merged: ChangeBatch = { ...first.value };
    while (!merged.allRowsChanged && keys.size < maxKeys) {
      const next = await ifReady(ahead);
      if (next === PENDING || next.done) break;
      ahead = request();
      for (const k of next.value.keys) keys.set(keyText(k), k);
      merged.checkpoint = next.value.checkpoint;
      merged.allRowsChanged = next.value.allRowsChanged;
    }
    yield { ...merged, keys: [...keys.values()] };
  }
}

/**
 * Not while a re-backfill is owed: the consumer writes the live generation with the table's
 * configuration, which the live vectors do not have. The re-backfill's last hash pass catches the
 * changes of the meantime, and the consumer restarts from its checkpoint after the swap.
 */
export const consumerWanted = (t: VectorTableRow) => t.mode === "managed" && t.syncMode === "cdc" && t.cdcCheckpoint !== null && CONSUMING.has(t.syncStatus) && servesConfig(t);

class ConsumerLoop {
  private readonly controller = new AbortController();
  private stream: ChangeStream | null = null;
  private failures = 0;
  readonly done: Promise<void>;

  constructor(private readonly services: Services, private readonly tableId: string) {
    this.done = this.run().catch((err) => services.logger.error({ err, vector_table_id: tableId }, "cdc consumer crashed"));
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.stream?.close().catch(() => {});
    await this.done;
  }

  private get db() {
    return this.services.database.db;
  }

  private now(): string {
    return this.services.clock.now().toISOString();
  }

  private get stopping(): boolean {
    return this.controller.signal.aborted || syncState(this.services).stopped || !this.services.scheduler.running;
  }

  private async run(): Promise<void> {
    // The stream waits for changes inside the driver; this watch ends it on shutdown.
    const watch = setInterval(() => void (this.stopping && this.stream?.close().catch(() => {})), this.services.config.cdcPollMs);
    try {
      while (!this.stopping) {
        const table = await findVectorTableById(this.db, this.tableId);
        if (!table || !consumerWanted(table)) return;
        const outcome = await this.session(table);
        if (outcome === "stop") return;
        if (outcome === "failed") await Bun.sleep(Math.min(MAX_BACKOFF_MS, this.services.config.cdcPollMs * 2 ** Math.min(this.failures, 8)));
      }
    } finally {
      clearInterval(watch);
    }
  }

  /** One stream from the stored checkpoint until it ends, fails, or the table stops wanting it. */
  private async session(table: VectorTableRow): Promise<"again" | "stop" | "failed"> {
    let job: SyncJob | null = null;
    let pending: ChangeBatch | null = null;
    try {
      job = await openJob(this.services, table);
      this.stream = await job.source.changes(cdcTarget(table), table.cdcCheckpoint!);
      for await (const batch of coalesced(this.stream)) {
        if (this.stopping) return "stop";
        const current = await findVectorTableById(this.db, this.tableId);
        if (!current || !consumerWanted(current) || current.configVersion !== table.configVersion) return "again";
        pending = batch;
        // sync/status shows the real backlog while it is applied (docs/vector-tables.md#sync-status).
        await notePendingChanges(this.db, table.id, streamPending(batch), this.now());
        await applyBatch(job, batch);
        await recordChangesApplied(this.db, table.id, batch.checkpoint, await streamCounts(this.services, table), this.now());
        await this.stream.ack(batch.checkpoint);
        pending = null;
        if (this.failures > 0 || current.syncStatus === "error") await this.recovered();
      }
      return "again";
    } catch (err) {
      if (this.stopping) return "stop";
      if (err instanceof CdcFeedLostError && job) return this.feedLost(job, err);
      return this.failed(err, pending);
    } finally {
      await this.stream?.close().catch(() => {});
      this.stream = null;
      await job?.close();
    }
  }

  private async feedLost(job: SyncJob, err: CdcFeedLostError): Promise<"again" | "failed" | "stop"> {
    this.services.logger.warn({ vector_table_id: this.tableId, err }, "cdc feed lost; resyncing by hashes");
    try {
      const checkpoint = await resync(job);
      await recordFeedResync(this.db, this.tableId, checkpoint, await streamCounts(this.services, job.table), this.now());
      return "again";
    } catch (e) {
      return this.failed(e, null);
    }
  }

  private async recovered(): Promise<void> {
    this.failures = 0;
    await markRecovered(this.db, this.tableId, this.now());
  }

  private async failed(err: unknown, pending: ChangeBatch | null): Promise<"failed" | "stop"> {
    this.failures++;
    const message = err instanceof Error ? err.message : String(err);
    this.services.logger.warn({ vector_table_id: this.tableId, err, failures: this.failures }, "cdc apply failed");
    if (pending) await keepPendingChanges(this.db, this.tableId, streamPending(pending), this.now());
    if (err instanceof BudgetExceededError) {
      await markError(this.db, this.tableId, message, this.now());
      return "stop";
    }
    if (this.failures >= FAILURES_BEFORE_ERROR) await markError(this.db, this.tableId, message, this.now());
    else await noteError(this.db, this.tableId, message, this.now());
    return "failed";
  }
}

/** Starts the table's consumer unless one runs (it stops by itself when the table stops wanting it). */
export function startConsumer(services: Services, tableId: string): void {
  const state = syncState(services);
  if (state.stopped || state.consumers.has(tableId)) return;
  const loop = new ConsumerLoop(services, tableId);
  const consumer: Consumer = { stop: () => loop.stop(), done: loop.done };
  state.consumers.set(tableId, consumer);
  void loop.done.finally(() => {
    if (state.consumers.get(tableId) === consumer) state.consumers.delete(tableId);
  });
}

export async function stopConsumer(services: Services, tableId: string): Promise<void> {
  await syncState(services).consumers.get(tableId)?.stop();
}
