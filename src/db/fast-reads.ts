import type { Client, InArgs, InStatement, ResultSet } from "@libsql/client";
import Database from "libsql";

// Why this exists (issue 16, the HTTP request path): for a local file, @libsql/client prepares
// every statement afresh and asks it for its columns twice, per call. A 12-column SELECT by
// primary key took ~230 µs where the same statement prepared once takes ~20 µs, and a request
// runs several (the key's actor, the table, its provider…): most of a cheap request's CPU. So
// plain reads outside a transaction run here instead: on one read connection of our own to the
// same file, with each statement prepared once and its column names read once. WAL gives this
// connection the latest committed snapshot at each statement, exactly what the client's own pool
// gives a read outside a transaction. Writes, transactions and anything unusual stay with the client.

const PLAIN_SELECT = /^\s*select\b/i;
/** Answers the number of statements a wrapped client holds prepared (tests: is the read path in use?). */
export const CACHED = Symbol("fast-reads cached statements");
/** Answers the estimated bytes of the statements a wrapped client holds prepared. */
export const CACHED_BYTES = Symbol("fast-reads cached bytes");
/**
 * The statement cache's bound, in estimated bytes, least recently used out first. Bounded by bytes,
 * not by count: statements differ in size by hundreds of times (a filter's `in` list once made
 * one statement per list length, ~215 KB for 1,000 values, and 512 such were reachable with a
 * read_only key). A statement estimated past a quarter of the bound runs without being kept.
 */
export const CACHE_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A prepared statement's memory, from its SQL: ~16 KiB of its own and ~72 bytes a character of
 * program past that (RSS over 200 prepared statements each: 17 KB for a 77-character SELECT,
 * 53 KB for `IN` with 100 placeholders, 215 KB with 1,000, 57 KB for 50 `OR`ed conditions).
 */
const statementBytes = (sql: string): number => 16 * 1024 + 72 * sql.length;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

type Prepared = { run(args: unknown[]): unknown[][]; make: RowMaker; columns: string[]; types: string[]; bytes: number };
type RowMaker = (values: unknown[]) => Record<string, unknown>;
type LibsqlStatement = {
  raw(on: boolean): void;
  safeIntegers(on: boolean): void;
  columns(): { name: string; type: string | null }[];
  all(args: unknown[]): unknown[][];
};

/**
 * Rows shaped as @libsql/client shapes them: the named columns own and enumerable (the first of
 * a repeated name wins), the values by index and `length` readable but not enumerable — drizzle
 * reads both (`Array.prototype.slice.call(row)` and `Object.keys`). The index getters sit on one
 * prototype per statement instead of being defined on every row.
 */
function rowMaker(columns: string[]): RowMaker {
  const VALUES = Symbol("values");
  const proto: Record<PropertyKey, unknown> = {};
  Object.defineProperty(proto, "length", { value: columns.length });
  columns.forEach((_, i) => Object.defineProperty(proto, i, { get(this: Record<symbol, unknown[]>) { return this[VALUES]![i]; } }));
  const named = columns.flatMap((name, i) => (columns.indexOf(name) === i ? [[name, i] as const] : []));
  return (values) => {
    const row = Object.create(proto) as Record<PropertyKey, unknown>;
    Object.defineProperty(row, VALUES, { value: values });
    for (const [name, i] of named) row[name] = values[i];
    return row as Record<string, unknown>;
  };
}

/** Arguments as @libsql/client passes them, or null when one needs its fuller conversion. */
function plainArgs(args: InArgs | undefined): unknown[] | null {
  if (args === undefined) return [];
  if (!Array.isArray(args)) return null;
  for (const v of args) {
    if (v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) continue;
    return null;
  }
  return args;
}

function valueFromSql(value: unknown): unknown {
  if (typeof value === "bigint") {
    if (value < MIN_SAFE || value > MAX_SAFE) throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    return Number(value);
  }
  if (value instanceof Buffer) {
    return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value.buffer : value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  }
  return value;
}

/** A result set as @libsql/client builds one for a read. */
function resultSet(columns: string[], types: string[], rows: Record<string, unknown>[]): ResultSet {
  return {
    columns,
    columnTypes: types,
    rows: rows as never,
    rowsAffected: 0,
    lastInsertRowid: undefined,
    toJSON: () => ({ columns, columnTypes: types, rows: rows.map((r) => Array.prototype.slice.call(r)), rowsAffected: 0, lastInsertRowid: null }),
  };
}

/**
 * Wraps a local-file client (`intMode: "number"`) so that plain SELECTs run on a read connection
 * with a statement cache. `path` is the database file.
 */
export function fastReads(client: Client, path: string, busyTimeoutMs: number): Client {
  let db: InstanceType<typeof Database> | null = null;
  const cache = new Map<string, Prepared>();
  let cachedBytes = 0;

  function prepared(sql: string): Prepared {
    let entry = cache.get(sql);
    if (entry) {
      // Least recently used goes first: re-insert on use.
      cache.delete(sql);
      cache.set(sql, entry);
      return entry;
    }
    db ??= new Database(path, { timeout: busyTimeoutMs });
    const stmt = db.prepare(sql) as unknown as LibsqlStatement;
    stmt.raw(true);
    stmt.safeIntegers(true);
    const cols = stmt.columns();
    const columns = cols.map((c) => c.name);
    entry = { run: (args) => stmt.all(args), make: rowMaker(columns), columns, types: cols.map((c) => c.type ?? ""), bytes: statementBytes(sql) };
    if (entry.bytes > CACHE_MAX_BYTES / 4) return entry;
    cache.set(sql, entry);
    cachedBytes += entry.bytes;
    for (const [oldest, old] of cache) {
      if (cachedBytes <= CACHE_MAX_BYTES) break;
      cache.delete(oldest);
      cachedBytes -= old.bytes;
    }
    return entry;
  }

  function read(sql: string, args: unknown[]): ResultSet {
    const p = prepared(sql);
    const rows = p.run(args).map((values) => {
      for (let i = 0; i < values.length; i++) values[i] = valueFromSql(values[i]);
      return p.make(values);
    });
    return resultSet(p.columns, p.types, rows);
  }

  const execute = (stmtOrSql: InStatement | string, maybeArgs?: InArgs): Promise<ResultSet> => {
    const sql = typeof stmtOrSql === "string" ? stmtOrSql : stmtOrSql.sql;
    const args = plainArgs(typeof stmtOrSql === "string" ? maybeArgs : stmtOrSql.args);
    if (args === null || !PLAIN_SELECT.test(sql)) return maybeArgs === undefined ? client.execute(stmtOrSql) : client.execute(sql, maybeArgs);
    try {
      return Promise.resolve(read(sql, args));
    } catch (err) {
      // The client's own path maps SQLite's errors into LibsqlError; let it answer the same way.
      return maybeArgs === undefined ? client.execute(stmtOrSql) : client.execute(sql, maybeArgs);
    }
  };

  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "execute") return execute;
      if (prop === CACHED) return cache.size;
      if (prop === CACHED_BYTES) return cachedBytes;
      if (prop === "close") return () => {
        cache.clear();
        cachedBytes = 0;
        db?.close();
        db = null;
        target.close();
      };
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
