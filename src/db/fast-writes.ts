import type { Client, InArgs, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import { keptOnLoop } from "../shared/write-place.ts";
import { overlay } from "./overlay.ts";
import { boundBytes, plainArgs, type RawResult, shaped, statementCache, writeBatch } from "./statement-cache.ts";
import { type WriteReply, type WriteRequest, writeWorkerUrl } from "./write-protocol.ts";

// Why this exists: a write batch of plain DML runs on a write connection of our own to the same
// file, each statement prepared once, in BEGIN IMMEDIATE … COMMIT. @libsql/client prepares each
// statement afresh on every call (5.4 % of the event loop in `js_prepare_sync` alone under a
// change-data-capture load). A large batch (THREAD_MIN_BYTES of bound values) runs on a thread of
// its own (write-worker.ts): a backfill's 64-row batch (rows, texts, keyword index, the commit's
// fsync) held the event loop 10–30 ms, the most of what delayed queries during a fill. A small one
// runs on the loop: a hand-off to the thread and back costs more than it does, and the write gate
// stays held meanwhile, which capped a change stream's rate; so do a change stream's batches of any
// size (shared/write-place.ts; docs/performance.md, "Write batches on a thread"). This wrapper must
// sit inside the write gate (client.ts): the gate keeps every other
// writer of this process, which use the client's pooled connections, out until a batch has
// committed or rolled back. Readers on other connections see the commit at their next statement
// (WAL). Interactive transactions, executeMultiple, migrate, read batches and anything unusual
// stay with the client.

/** Statements that only read or change rows. DDL, PRAGMAs (per connection!), ATTACH, BEGIN… go to the client. */
const PLAIN_DML = /^\s*(insert|update|delete|replace|select|with)\b/i;
/** Answers the number of statements the write connection holds prepared (tests: is the write path in use?). */
export const WRITES_CACHED = Symbol("fast-writes cached statements");
/** Answers the estimated bytes of the statements the write connection holds prepared. */
export const WRITES_CACHED_BYTES = Symbol("fast-writes cached bytes");
/** Answers a promise that resolves once the write thread has closed its connection and ended (after `close`). */
export const WRITES_CLOSED = Symbol("fast-writes closed");

type Plain = { sql: string; args: unknown[] };

/** Bound bytes (blobs and texts) from which a batch runs on the thread: a 64-row backfill batch at 256 dimensions binds ~80 KB, a stream's change a few. */
export const THREAD_MIN_BYTES = 32 * 1024;

type BatchStatement = InStatement | [string, InArgs?];

/** The batch as plain statements, or null if any one needs the client. */
function plainBatch(stmts: BatchStatement[]): Plain[] | null {
  const plain: Plain[] = [];
  for (const stmt of stmts) {
    // The three shapes the client accepts: "sql", [sql, args?] and { sql, args? }.
    const [sql, raw] = typeof stmt === "string" ? [stmt, undefined] : Array.isArray(stmt) ? stmt : [stmt.sql, stmt.args];
    const args = plainArgs(raw);
    if (args === null || !PLAIN_DML.test(sql)) return null;
    plain.push({ sql, args });
  }
  return plain;
}

/** A blob that views part of a larger buffer, copied: posting a view posts its whole buffer (a row's vector inside a chunk of thousands). */
function own(v: unknown): unknown {
  return v instanceof Uint8Array && v.byteLength !== v.buffer.byteLength ? v.slice() : v;
}

/**
 * Wraps a local-file client (`intMode: "number"`) so that write batches of plain DML run on a
 * write connection with a statement cache. `path` is the database file.
 */
export function fastWrites(client: Client, path: string, busyTimeoutMs: number): Client {
  const cache = statementCache(path, busyTimeoutMs);
  let worker: Worker | null = null;
  const waiting = new Map<number, (reply: WriteReply | null) => void>();
  let nextId = 0;
  // The thread's statement cache as its last reply said.
  let size = 0;
  let bytes = 0;
  let ended: Promise<void> = Promise.resolve();
  const makers = new Map<string, (values: unknown[]) => Record<string, unknown>>();

  /** The thread, started on the first batch. It keeps the process alive only while a batch is in flight. */
  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(writeWorkerUrl());
    started.onmessage = (event: MessageEvent<WriteReply>) => {
      const reply = event.data;
      size = reply.size;
      bytes = reply.bytes;
      const done = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) started.unref();
      done?.(reply);
    };
    // A thread that died answers nothing more: its batches go to the client, the next starts a new one.
    started.onerror = (event) => {
      console.error(`vecsync: the database write thread failed (${event.message}); its batches run on the event loop`);
      if (worker === started) worker = null;
      for (const done of waiting.values()) done(null);
      waiting.clear();
    };
    return (worker = started);
  }

  /** The batch's results, here; null when it rolled back. */
  function writeHere(stmts: Plain[]): RawResult[] | null {
    try {
      return writeBatch(cache, stmts);
    } catch {
      return null;
    }
  }

  /** The batch's results from the thread; null when it rolled back or the thread died. */
  function writeThere(stmts: Plain[]): Promise<RawResult[] | null> {
    const to = thread();
    to.ref();
    const id = ++nextId;
    const request: WriteRequest = { kind: "batch", id, path, busyTimeoutMs, stmts: stmts.map((s) => ({ sql: s.sql, args: s.args.map(own) })) };
    return new Promise((resolve) => {
      waiting.set(id, (reply) => resolve(reply?.ok ? reply.results : null));
      to.postMessage(request);
    });
  }

  const batch = async (stmts: BatchStatement[], mode?: TransactionMode): Promise<ResultSet[]> => {
    // "deferred" (drizzle's batch passes no mode) answers the same under BEGIN IMMEDIATE: the gate
    // already holds every writer of this process back, and taking the lock up front can't fail
    // half-way with SQLITE_BUSY_SNAPSHOT the way a deferred upgrade can.
    // A closed client must say so (CLIENT_CLOSED), not quietly start our thread again.
    const plain = mode === "read" || client.closed ? null : plainBatch(stmts);
    if (plain === null || !(mode === undefined || mode === "write" || mode === "deferred")) return client.batch(stmts, mode);
    const threaded = !keptOnLoop() && plain.reduce((n, s) => n + boundBytes(s.args), 0) >= THREAD_MIN_BYTES;
    const results = threaded ? await writeThere(plain) : writeHere(plain);
    // Rolled back: the client's own path runs the batch again and answers its LibsqlBatchError
    // (code, index) or its result, as it would have without us.
    return results ? results.map((r) => shaped(r, makers)) : client.batch(stmts, mode);
  };

  return overlay(client, {
    batch,
    get [WRITES_CACHED]() {
      return cache.size + size;
    },
    get [WRITES_CACHED_BYTES]() {
      return cache.bytes + bytes;
    },
    get [WRITES_CLOSED]() {
      return ended;
    },
    close() {
      // The thread answers the batches posted before this, then closes its connection and ends.
      const last = worker;
      if (last) {
        ended = new Promise<void>((resolve) => last.addEventListener("close", () => resolve()));
        last.postMessage({ kind: "close" } satisfies WriteRequest);
        last.unref();
      }
      worker = null;
      cache.close();
      client.close();
    },
  });
}
