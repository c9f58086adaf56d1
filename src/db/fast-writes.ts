import type { Client, InArgs, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import { overlay } from "./overlay.ts";
import { plainArgs, statementCache } from "./statement-cache.ts";

// Why this exists: under a change-data-capture load the vector store commits a write batch of a
// handful of statements per change, and @libsql/client prepares each statement afresh on every
// call (5.4 % of the event loop in `js_prepare_sync` alone). So a write batch of plain DML runs
// here instead: on one write connection of our own to the same file, each statement prepared
// once, in BEGIN IMMEDIATE … COMMIT. This wrapper must sit inside the write gate (client.ts):
// the gate keeps every other writer of this process, which use the client's pooled connections,
// out while a batch holds the write lock, and the batch runs synchronously from BEGIN to COMMIT,
// so nothing else can interleave on this connection. Readers on other connections see the commit
// at their next statement (WAL). Interactive transactions, executeMultiple, migrate, read batches
// and anything unusual stay with the client.

/** Statements that only read or change rows. DDL, PRAGMAs (per connection!), ATTACH, BEGIN… go to the client. */
const PLAIN_DML = /^\s*(insert|update|delete|replace|select|with)\b/i;
/** Answers the number of statements the write connection holds prepared (tests: is the write path in use?). */
export const WRITES_CACHED = Symbol("fast-writes cached statements");
/** Answers the estimated bytes of the statements the write connection holds prepared. */
export const WRITES_CACHED_BYTES = Symbol("fast-writes cached bytes");

type Plain = { sql: string; args: unknown[] };
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

/**
 * Wraps a local-file client (`intMode: "number"`) so that write batches of plain DML run on a
 * write connection with a statement cache. `path` is the database file.
 */
export function fastWrites(client: Client, path: string, busyTimeoutMs: number): Client {
  const cache = statementCache(path, busyTimeoutMs);

  function write(stmts: Plain[]): ResultSet[] {
    try {
      cache.run("BEGIN IMMEDIATE", []);
      // Each result is complete (rows converted) before COMMIT, so a conversion error rolls
      // back as it does in the client's batch.
      const results = stmts.map((s) => cache.run(s.sql, s.args));
      cache.run("COMMIT", []);
      return results;
    } catch (err) {
      // Release the write lock before the client's path asks for it: closing alone would not,
      // as libsql keeps the connection open while any statement of it is still referenced. Then
      // start afresh: a failed statement may be left unreset (see write-gate.ts), and a fresh
      // connection is the surest way to hold nothing half-run. Errors are rare; reopening is cheap.
      try {
        if (cache.inTransaction()) cache.run("ROLLBACK", []);
      } catch {
        // Nothing better to do: the client's path will wait out its busy timeout and say so.
      }
      cache.close();
      throw err;
    }
  }

  const batch = (stmts: BatchStatement[], mode?: TransactionMode): Promise<ResultSet[]> => {
    // "deferred" (drizzle's batch passes no mode) answers the same under BEGIN IMMEDIATE: the gate
    // already holds every writer of this process back, and taking the lock up front can't fail
    // half-way with SQLITE_BUSY_SNAPSHOT the way a deferred upgrade can.
    // A closed client must say so (CLIENT_CLOSED), not quietly open our connection again.
    const plain = mode === "read" || client.closed ? null : plainBatch(stmts);
    if (plain === null || !(mode === undefined || mode === "write" || mode === "deferred")) return client.batch(stmts, mode);
    try {
      return Promise.resolve(write(plain));
    } catch {
      // Rolled back: the client's own path runs the batch again and answers its LibsqlBatchError
      // (code, index) or its result, as it would have without us.
      return client.batch(stmts, mode);
    }
  };

  return overlay(client, {
    batch,
    get [WRITES_CACHED]() {
      return cache.size;
    },
    get [WRITES_CACHED_BYTES]() {
      return cache.bytes;
    },
    close() {
      cache.close();
      client.close();
    },
  });
}
