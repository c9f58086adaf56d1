// One logical replication stream turned into ChangeBatches: the primary keys each committed
// transaction touched, checkpointed by the transaction's end LSN. Nothing is acknowledged until
// the consumer calls ack(): a consumer that dies before that sees the same batch again.
import type { Duplex } from "node:stream";
import { DriverError } from "../../shared/errors.ts";
import { toDriverError } from "./postgres-errors.ts";
import { parseValue } from "./postgres-values.ts";
import { decodeFrame, decodePgOutput, lsnToBigInt, lsnToString, statusUpdate, type PgOutputMessage, type Relation, type Tuple } from "./pgoutput.ts";
import type { ChangeBatch, ChangeStream, Key, StreamBacklog } from "./types.ts";

/** Past this many distinct keys a transaction is reported as "every row changed" (resync). */
const MAX_KEYS_PER_BATCH = 100_000;
/** Batches buffered before reading pauses (the socket then applies backpressure to the server). */
const HIGH_WATER_BATCHES = 256;
/** Status updates keep the server's wal_sender_timeout (default 60 s) from firing while paused. */
const STATUS_INTERVAL_MS = 10_000;
/** At most one position-only batch per this long: each costs the consumer a write. */
const POSITION_EVERY_MS = 1_000;

type Txn = { keys: Map<string, Key>; all: boolean; xid: number };

/** Resolves once a fresh read on the source sees the transaction `xid` committed (postgres-cdc.ts). */
export type VisibilityWait = (xid: number) => Promise<void>;

export class ReplicationFeed implements ChangeStream {
  private readonly relations = new Map<number, { relation: Relation; keyIndexes: number[] | null }>();
  private readonly queue: { batch: ChangeBatch; xid: number | null }[] = [];
  private wake: (() => void) | null = null;
  private failure: DriverError | null = null;
  private closed = false;
  private txn: Txn | null = null;
  private received: bigint;
  private acked: bigint;
  /** End LSN of the newest batch handed out or queued. */
  private lastBatchEnd: bigint;
  private lastPositionAt = 0;
  /** A position held back by POSITION_EVERY_MS, handed out once the interval is over. */
  private positionTimer: ReturnType<typeof setTimeout> | null = null;
  /** Batches handed out and not acknowledged (a consumer reads ahead of what it applies): their end and keys. */
  private handed: { end: bigint; keys: number }[] = [];
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly connection: { end(options: { timeout: number }): Promise<void> },
    private readonly stream: Duplex,
    private readonly pk: string[],
    start: string,
    private readonly password: string,
    private readonly visible: VisibilityWait,
  ) {
    this.received = this.acked = this.lastBatchEnd = lsnToBigInt(start);
    stream.on("data", (chunk: Buffer) => this.onFrame(chunk));
    stream.on("error", (err) => this.fail(toDriverError(err, { password, operation: "replication" })));
    stream.on("close", () => this.fail(new DriverError("the replication stream closed", { retryable: true })));
    this.timer = setInterval(() => this.sendStatus(), STATUS_INTERVAL_MS);
    this.timer.unref?.();
  }

  private fail(error: DriverError) {
    if (this.closed || this.failure) return;
    this.failure = error;
    this.wake?.();
  }

  private sendStatus(): Promise<void> {
    if (this.closed || this.failure || !this.stream.writable) return Promise.resolve();
    const frame = statusUpdate(this.received, this.acked);
    return new Promise((resolve) => this.stream.write(frame, () => resolve()));
  }

  private onFrame(chunk: Buffer) {
    const frame = decodeFrame(chunk);
    if (frame.kind === "keepalive") {
      if (frame.walEnd > this.received) this.received = frame.walEnd;
      this.notePosition();
      if (frame.replyRequested) void this.sendStatus();
    } else if (frame.kind === "xlog") {
      if (frame.walEnd > this.received) this.received = frame.walEnd;
      this.onMessage(decodePgOutput(frame.payload));
    }
  }

  /**
   * Caught up with no transaction open: everything before the server's position is delivered or
   * not ours. Handed out as a batch without keys, so the consumer stores the position and then
   * acknowledges it like any other (the slot may move on and WAL be recycled), and the slot is
   * never ahead of what vecsync stored. A position inside the interval is held back, never
   * dropped: the server reports a position once, when its WAL moves, so a dropped one stayed
   * unseen until more WAL came (seconds on a quiet server; `min_synced_through` queries waited on
   * it). One that came behind a queued batch is handed out once that batch is acknowledged.
   */
  private notePosition() {
    if (this.closed || this.txn || this.queue.length > 0 || this.received <= this.lastBatchEnd) return;
    const waitMs = this.lastPositionAt + POSITION_EVERY_MS - Date.now();
    if (waitMs > 0) {
      this.positionTimer ??= setTimeout(() => ((this.positionTimer = null), this.notePosition()), waitMs);
      return;
    }
    this.lastPositionAt = Date.now();
    this.lastBatchEnd = this.received;
    this.queue.push({ batch: { checkpoint: lsnToString(this.received), keys: [], allRowsChanged: false, committedAt: new Date() }, xid: null });
    this.wake?.();
  }

  private onMessage(message: PgOutputMessage) {
    switch (message.tag) {
      case "relation": {
        const indexes = this.pk.map((name) => message.relation.columns.findIndex((c) => c.name === name));
        this.relations.set(message.relation.oid, { relation: message.relation, keyIndexes: indexes.includes(-1) ? null : indexes });
        return;
      }
      case "begin":
        this.txn = { keys: new Map(), all: false, xid: message.xid };
        return;
      case "insert":
        return this.addKey(message.relationOid, message.newTuple);
      case "update":
        if (message.oldTuple) this.addKey(message.relationOid, message.oldTuple);
        return this.addKey(message.relationOid, message.newTuple);
      case "delete":
        return this.addKey(message.relationOid, message.oldTuple);
      case "truncate":
        if (this.txn) this.txn.all = true;
        return;
      case "commit":
        return this.commit(message.endLsn, message.commitTime);
      case "other":
        return;
    }
  }

  private addKey(relationOid: number, tuple: Tuple) {
    const txn = this.txn;
    const known = this.relations.get(relationOid);
    if (!txn || txn.all) return;
    const texts = known?.keyIndexes?.map((i) => tuple[i]);
    // No key in the message (an unknown column, or a TOASTed key left out): re-check everything.
    if (!known || !texts || texts.some((t) => t === null || t === undefined) || txn.keys.size >= MAX_KEYS_PER_BATCH) {
      txn.all = true;
      txn.keys.clear();
      return;
    }
    const id = JSON.stringify(texts);
    if (!txn.keys.has(id)) {
      const columns = known.relation.columns;
      txn.keys.set(id, known.keyIndexes!.map((i, n) => parseValue(columns[i]!.typeOid, texts[n]!)) as Key);
    }
  }

  private commit(endLsn: bigint, committedAt: Date) {
    const txn = this.txn;
    this.txn = null;
    if (!txn || (!txn.all && txn.keys.size === 0)) return;
    this.lastBatchEnd = endLsn;
    this.queue.push({ batch: { checkpoint: lsnToString(endLsn), keys: [...txn.keys.values()], allRowsChanged: txn.all, committedAt }, xid: txn.xid });
    if (this.queue.length >= HIGH_WATER_BATCHES) this.stream.pause();
    this.wake?.();
  }

  /**
   * Keys decoded and queued, and the bytes of WAL the server has written past `applied` (its end
   * as last heard, in a keepalive or a message): what the slot holds that vecsync has not applied,
   * the tables it does not stream included. Not exact while reading is paused (HIGH_WATER_BATCHES).
   */
  backlog(applied: string): StreamBacklog {
    const at = lsnToBigInt(applied);
    const handed = this.handed.reduce((n, h) => (h.end > at ? n + h.keys : n), 0);
    const keys = handed + this.queue.reduce((n, q) => n + q.batch.keys.length, 0) + (this.txn?.keys.size ?? 0);
    const bytes = this.received - at;
    return { keys, bytes: bytes > 0n ? Number(bytes) : 0 };
  }

  async ack(checkpoint: string): Promise<void> {
    const lsn = lsnToBigInt(checkpoint);
    if (lsn <= this.acked) return;
    this.acked = lsn;
    this.handed = this.handed.filter((h) => h.end > lsn);
    await this.sendStatus();
    this.notePosition();
  }

  async next(): Promise<IteratorResult<ChangeBatch>> {
    for (;;) {
      const queued = this.queue.shift();
      if (queued) {
        if (this.queue.length < HIGH_WATER_BATCHES / 2 && this.stream.isPaused()) this.stream.resume();
        // The consumer re-reads the batch's keys: hand it out only once a read sees the commit.
        if (queued.xid !== null) await this.visible(queued.xid);
        if (queued.batch.keys.length > 0) this.handed.push({ end: lsnToBigInt(queued.batch.checkpoint), keys: queued.batch.keys.length });
        return { value: queued.batch, done: false };
      }
      if (this.closed) return { value: undefined, done: true };
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<ChangeBatch> {
    return { next: () => this.next(), return: async () => (await this.close(), { value: undefined, done: true }) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.sendStatus();
    this.closed = true;
    clearInterval(this.timer);
    if (this.positionTimer) clearTimeout(this.positionTimer);
    this.wake?.();
    this.stream.destroy();
    // The stream is one never-ending query: end the session now rather than wait for it.
    await this.connection.end({ timeout: 0 }).catch(() => {});
  }
}
