// CDC (docs/architecture.md#cdc): one consumer per cdc table applies the source's change stream to the
// live generation. Each batch's keys are re-read (absent = deleted), rendered, embedded and
// written; only then is the position stored on the table and acknowledged to the source, so a
// crash replays at most the batch in flight. A lost feed falls back to a full hash pass.
import type { Services } from "../../services.ts";
import { CdcFeedLostError, keyText, positionOnly, type ChangeBatch, type ChangeStream } from "../../drivers/sources/types.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { hasStorage, keepPendingChanges, markError, markRecovered, noteError, notePendingChanges, recordChangesApplied, recordFeedPosition, recordFeedRecreated, recordFeedResynced, servesConfig } from "../vector-tables/state.ts";
import { DriverError, isRetryable } from "../../shared/errors.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { BudgetExceededError } from "./budget.ts";
import { streamCounts, streamPending } from "./counters.ts";
import { FAILURES_BEFORE_ERROR } from "./batch.ts";
import { cdcTarget, openJob, type SyncJob } from "./job.ts";
import { applyBatch, resync } from "./stream-apply.ts";
import { syncState, type Consumer } from "./state.ts";
import { embedderTokens } from "./history.ts";
import { StreamHistory } from "./stream-history.ts";

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
export const consumerWanted = (t: VectorTableRow) => hasStorage(t) && t.syncMode === "cdc" && t.cdcCheckpoint !== null && CONSUMING.has(t.syncStatus) && servesConfig(t);

/** A failing consumer turns its table to `error` only after failing this long (a source restart never shows as one). */
const ERROR_AFTER_MS = 10_000;
/** A stream that lived this long before it broke was healthy: the next break starts the back-off over. */
const HEALTHY_STREAM_MS = 5_000;

type Outcome = "again" | "stop" | "failed" | "interrupted";

class ConsumerLoop {
  private readonly controller = new AbortController();
  private stream: ChangeStream | null = null;
  /** Consecutive failed sessions (back-off, and `error` once they last); where the last one failed. */
  private failures = 0;
  private failingSince: number | null = null;
  private failedAt: "source" | "apply" | null = null;
  /** Streams that broke in a row without having been healthy (back-off only). */
  private interruptions = 0;
  /** The stream's minutes for the sync history (made once the table is read); the tokens its session's provider had billed when last counted. */
  history: StreamHistory | null = null;
  private billed = 0;
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

  private backoff(n: number): number {
    return Math.min(MAX_BACKOFF_MS, this.services.config.cdcPollMs * 2 ** Math.min(n, 8));
  }

  private async run(): Promise<void> {
    // The stream waits for changes inside the driver; this watch ends it on shutdown.
    // It also writes the history's minute once it is over, when no batch came to do it.
    const watch = setInterval(() => {
      if (this.stopping) void this.stream?.close().catch(() => {});
      void this.history?.flush();
      void this.refreshBacklog();
    }, this.services.config.cdcPollMs);
    try {
      while (!this.stopping) {
        const table = await findVectorTableById(this.db, this.tableId);
        if (!table || !consumerWanted(table)) return;
        const outcome = await this.session(table);
        if (outcome === "stop") return;
        if (outcome === "failed") await Bun.sleep(this.backoff(this.failures));
        if (outcome === "interrupted") await Bun.sleep(this.backoff(this.interruptions - 1));
      }
    } finally {
      clearInterval(watch);
      await this.history?.close();
    }
  }

  /**
   * While a batch takes long to apply (a slow or failing provider), what the stream decoded behind
   * it keeps arriving: sync/status and /metrics follow it, so the table never reads a few rows
   * pending while it falls behind (docs/vector-tables.md#sync-status).
   */
  private async refreshBacklog(): Promise<void> {
    const { applying, stream } = this;
    if (!applying || !stream || Date.now() - applying.since < this.services.config.cdcPollMs) return;
    await notePendingChanges(this.db, this.tableId, streamPending(applying.batch, stream.backlog(applying.batch.checkpoint)), this.now()).catch(() => {});
  }

  /** The batch being applied and since when (Date.now()): refreshBacklog's. */
  private applying: { batch: ChangeBatch; since: number } | null = null;

  /** The tokens the session's provider billed since last asked (a platform built-in model: 0). */
  private spent(job: SyncJob): number {
    const total = embedderTokens(job.embedder);
    const delta = total - this.billed;
    this.billed = total;
    return delta;
  }

  /** One stream from the stored checkpoint until it ends, fails, or the table stops wanting it. */
  private async session(table: VectorTableRow): Promise<Outcome> {
    let job: SyncJob | null = null;
    let pending: ChangeBatch | null = null;
    let openedAt: number | null = null;
    try {
      job = await openJob(this.services, table);
      this.billed = 0;
      this.history ??= new StreamHistory(this.services, table);
      if (table.feedResyncReason) await this.resync(job, table.feedResyncReason);
      this.stream = await job.source.changes(cdcTarget(table), table.cdcCheckpoint!);
      openedAt = Date.now();
      if (this.failedAt === "source") await this.recovered();
      for await (const batch of coalesced(this.stream)) {
        if (this.stopping) return "stop";
        const current = await findVectorTableById(this.db, this.tableId);
        if (!current || !consumerWanted(current) || current.configVersion !== table.configVersion) return "again";
        if (positionOnly(batch)) {
          // Only the position moved (WAL of other tables): stored, then confirmed.
          await recordFeedPosition(this.db, table.id, batch.checkpoint, this.stream.backlog(batch.checkpoint).bytes);
          await this.stream.ack(batch.checkpoint);
          continue;
        }
        pending = batch;
        // An apply that takes longer than a poll shows its backlog in sync/status (refreshBacklog);
        // a quick one is not noted first: a commit more per batch (its fsync on the loop) for a
        // figure that would read the same a few milliseconds later (docs/vector-tables.md#sync-status).
        this.applying = { batch, since: Date.now() };
        const applied = await applyBatch(job, batch).finally(() => (this.applying = null));
        this.history.applied(applied, this.spent(job));
        const behind = this.stream.backlog(batch.checkpoint);
        await recordChangesApplied(this.db, table.id, batch.checkpoint, { ...(await streamCounts(this.services, job.store, table)), rowsPending: behind.keys }, this.now(), behind.bytes);
        await this.stream.ack(batch.checkpoint);
        pending = null;
        await this.history.flush();
        this.interruptions = 0;
        if (this.failures > 0 || current.syncStatus === "error" || job.retryNoted.value) await this.recovered();
        job.retryNoted.value = false;
      }
      return "again";
    } catch (err) {
      if (this.stopping) return "stop";
      // Awaited here, not returned as a promise: `finally` closes the job the repair still uses.
      if (err instanceof CdcFeedLostError && job) return await this.feedLost(job, err);
      if (openedAt !== null && !pending && isRetryable(err)) return await this.interrupted(err, Date.now() - openedAt);
      if (pending) this.history?.failed(err, job ? this.spent(job) : 0);
      return await this.failed(err, pending, openedAt === null ? "source" : "apply");
    } finally {
      await this.stream?.close().catch(() => {});
      this.stream = null;
      await job?.close();
    }
  }

  /**
   * The open stream broke (the source restarted, the walsender was ended, the network dropped):
   * noted, and the consumer reconnects; it counts toward `error` only if reconnecting fails.
   */
  private async interrupted(err: unknown, livedMs: number): Promise<Outcome> {
    this.interruptions = livedMs >= HEALTHY_STREAM_MS ? 1 : this.interruptions + 1;
    this.failedAt = "source";
    const message = err instanceof Error ? err.message : String(err);
    this.services.logger.warn({ vector_table_id: this.tableId, err, interruptions: this.interruptions }, "cdc stream interrupted; reconnecting");
    await noteError(this.db, this.tableId, `the change stream from the source was interrupted (${message}); reconnecting`, this.now());
    return "interrupted";
  }

  /**
   * The feed is gone or cannot be trusted (docs/day-two.md#lost-change-feed): whatever is left of
   * it is dropped, a new slot and publication are created and recorded with the hash pass they
   * owe, and the pass brings the collection in line; changes made meanwhile wait in the new slot.
   */
  private async feedLost(job: SyncJob, err: CdcFeedLostError): Promise<Outcome> {
    const reason = err.message;
    this.services.logger.warn({ vector_table_id: this.tableId, err }, "cdc feed lost; recreating it and resyncing by hashes");
    try {
      await this.stream?.close().catch(() => {});
      await job.source.teardownCdc(cdcTarget(job.table));
      const { checkpoint } = await job.source.prepareCdc(cdcTarget(job.table));
      await recordFeedRecreated(this.db, this.tableId, { checkpoint, reason }, this.now());
      await this.resync(job, reason);
      return "again";
    } catch (e) {
      return await this.failed(e, null, "apply");
    }
  }

  /** The hash pass a recreated feed owes; then `last_error` tells what happened, in the past tense. */
  private async resync(job: SyncJob, reason: string): Promise<void> {
    const { counts, rows } = await resync(job);
    this.history?.applied({ counts, rows }, this.spent(job));
    const at = this.now();
    const account =
      `${reason}; at ${at} vecsync recreated the change feed and resynchronized by hashes (${rows} rows checked, ` +
      `${counts.embedded} embedded, ${counts.reused + counts.metadata} updated without embedding, ${counts.deleted} deleted); streaming again`;
    await recordFeedResynced(this.db, this.tableId, account, await streamCounts(this.services, job.store, job.table), at);
    this.services.logger.info({ vector_table_id: this.tableId, ...counts, rows }, "cdc feed recreated and resynced");
    this.failures = 0;
    this.failingSince = null;
    this.failedAt = null;
  }

  private async recovered(): Promise<void> {
    this.failures = 0;
    this.failingSince = null;
    this.failedAt = null;
    await markRecovered(this.db, this.tableId, this.now());
  }

  private async failed(err: unknown, pending: ChangeBatch | null, where: "source" | "apply"): Promise<Outcome> {
    this.failures++;
    this.failingSince ??= Date.now();
    this.failedAt = where;
    const message = describeFailure(err, where);
    this.services.logger.warn({ vector_table_id: this.tableId, err, failures: this.failures }, "cdc apply failed");
    if (pending) await keepPendingChanges(this.db, this.tableId, streamPending(pending, this.stream?.backlog(pending.checkpoint) ?? { keys: 0, bytes: null }), this.now());
    if (err instanceof BudgetExceededError) {
      await markError(this.db, this.tableId, message, this.now());
      return "stop";
    }
    const lasting = this.failures >= FAILURES_BEFORE_ERROR && Date.now() - this.failingSince >= ERROR_AFTER_MS;
    if (lasting) await markError(this.db, this.tableId, message, this.now());
    else await noteError(this.db, this.tableId, message, this.now());
    return "failed";
  }
}

/**
 * `last_error` for a failed session: a source read that failed on the way (the source restarted or
 * dropped the connection mid-apply) says so; anything else (the provider's own words…) as it is.
 */
function describeFailure(err: unknown, where: "source" | "apply"): string {
  const message = err instanceof Error ? err.message : String(err);
  const fromSource = err instanceof DriverError && err.retryable && typeof err.context.operation === "string";
  if (!fromSource) return message;
  return where === "source" ? `the source could not be reached (${message}); retrying` : `reading the changed rows from the source failed (${message}); retrying`;
}

/** Starts the table's consumer unless one runs (it stops by itself when the table stops wanting it). */
export function startConsumer(services: Services, tableId: string): void {
  const state = syncState(services);
  if (state.stopped || state.retired.has(tableId) || state.consumers.has(tableId)) return;
  const loop = new ConsumerLoop(services, tableId);
  const consumer: Consumer = { stop: () => loop.stop(), done: loop.done, closeHistory: async () => void (await loop.history?.close()) };
  state.consumers.set(tableId, consumer);
  void loop.done.finally(() => {
    if (state.consumers.get(tableId) === consumer) state.consumers.delete(tableId);
  });
}

export async function stopConsumer(services: Services, tableId: string): Promise<void> {
  await syncState(services).consumers.get(tableId)?.stop();
}
