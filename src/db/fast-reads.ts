import type { Client, InArgs, InStatement, ResultSet } from "@libsql/client";
import { overlay } from "./overlay.ts";
import { plainArgs, statementCache } from "./statement-cache.ts";

export { CACHE_MAX_BYTES } from "./statement-cache.ts";

// Why this exists (issue 16, the HTTP request path): for a local file, @libsql/client prepares
// every statement afresh and asks it for its columns twice, per call. A 12-column SELECT by
// primary key took ~230 µs where the same statement prepared once takes ~20 µs, and a request
// runs several (the key's actor, the table, its provider…): most of a cheap request's CPU. So
// plain reads outside a transaction run here instead: on one read connection of our own to the
// same file, with each statement prepared once and its column names read once. WAL gives this
// connection the latest committed snapshot at each statement, exactly what the client's own pool
// gives a read outside a transaction. Writes (write batches: fast-writes.ts), transactions and
// anything unusual stay with the client.

const PLAIN_SELECT = /^\s*select\b/i;
/** Answers the number of statements a wrapped client holds prepared (tests: is the read path in use?). */
export const CACHED = Symbol("fast-reads cached statements");
/** Answers the estimated bytes of the statements a wrapped client holds prepared. */
export const CACHED_BYTES = Symbol("fast-reads cached bytes");

/**
 * Wraps a local-file client (`intMode: "number"`) so that plain SELECTs run on a read connection
 * with a statement cache. `path` is the database file.
 */
export function fastReads(client: Client, path: string, busyTimeoutMs: number): Client {
  const cache = statementCache(path, busyTimeoutMs);
  const slow = (stmtOrSql: InStatement | string, maybeArgs?: InArgs) =>
    maybeArgs === undefined ? client.execute(stmtOrSql) : client.execute(typeof stmtOrSql === "string" ? stmtOrSql : stmtOrSql.sql, maybeArgs);

  const execute = (stmtOrSql: InStatement | string, maybeArgs?: InArgs): Promise<ResultSet> => {
    const sql = typeof stmtOrSql === "string" ? stmtOrSql : stmtOrSql.sql;
    const args = plainArgs(typeof stmtOrSql === "string" ? maybeArgs : stmtOrSql.args);
    // A closed client must say so (CLIENT_CLOSED), not quietly open our connection again.
    if (args === null || client.closed || !PLAIN_SELECT.test(sql)) return slow(stmtOrSql, maybeArgs);
    try {
      return Promise.resolve(cache.run(sql, args));
    } catch {
      // The client's own path maps SQLite's errors into LibsqlError; let it answer the same way.
      return slow(stmtOrSql, maybeArgs);
    }
  };

  return overlay(client, {
    execute,
    get [CACHED]() {
      return cache.size;
    },
    get [CACHED_BYTES]() {
      return cache.bytes;
    },
    close() {
      cache.close();
      client.close();
    },
  });
}
