import type { InArgs, ResultSet } from "@libsql/client";
import Database from "libsql";

// One connection of our own to a local file with each statement prepared once, answering what
// @libsql/client (`intMode: "number"`) answers for the same statement. @libsql/client prepares
// every statement afresh, per call (see fast-reads.ts and fast-writes.ts for what that cost).
// The connection opens at first use, so a wrapped client that never takes a path costs nothing.

/**
 * Each cache's bound, in estimated bytes, least recently used out first. Bounded by bytes, not by
 * count: statements differ in size by hundreds of times (a filter's `in` list once made one
 * statement per list length, ~215 KB for 1,000 values, and 512 such were reachable with a
 * read_only key). A statement estimated past a quarter of the bound (with what it binds) runs
 * without being kept.
 */
export const CACHE_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A prepared statement's memory, from its SQL: ~16 KiB of its own and ~72 bytes a character of
 * program past that (RSS over 200 prepared statements each: 17 KB for a 77-character SELECT,
 * 53 KB for `IN` with 100 placeholders, 215 KB with 1,000, 57 KB for 50 `OR`ed conditions).
 */
const statementBytes = (sql: string): number => 16 * 1024 + 72 * sql.length;
/**
 * What a statement keeps of its last arguments: SQLite's reset does not clear bindings, so a
 * cached statement holds a copy of its last blobs and texts until it runs again or goes (a write
 * of 64 rows × 768 dimensions binds ~200 KB of vectors; RSS: a 100 MB blob stays held until rebound).
 */
export function boundBytes(args: unknown[]): number {
  let n = 0;
  for (const v of args) n += typeof v === "string" ? v.length : v instanceof Uint8Array ? v.byteLength : 8;
  return n;
}
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

type RowMaker = (values: unknown[]) => Record<string, unknown>;
type LibsqlStatement = {
  raw(on: boolean): void;
  safeIntegers(on: boolean): void;
  columns(): { name: string; type: string | null }[];
  all(args: unknown[]): unknown[][];
  run(args: unknown[]): { changes: number; lastInsertRowid: number | bigint };
};
/**
 * A statement that returns rows has `make`; one that does not (a write without RETURNING) has not.
 * `bytes`: its weight in the cache, itself and its last arguments.
 */
type Prepared = { stmt: LibsqlStatement; make: RowMaker | null; columns: string[]; types: string[]; bytes: number };

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

/**
 * Positional arguments the client would hand to libsql unchanged (its `valueToSql` passes these
 * through as they are), or null when one needs its fuller conversion or its error: booleans,
 * dates, ArrayBuffers, non-finite numbers, out-of-range bigints, named arguments. The vector
 * store binds bigints and Uint8Array vectors, so those must count as plain.
 */
export function plainArgs(args: InArgs | undefined): unknown[] | null {
  if (args === undefined) return [];
  if (!Array.isArray(args)) return null;
  for (const v of args) {
    if (v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) || v instanceof Uint8Array) continue;
    if (typeof v === "bigint" && v >= MIN_INT64 && v <= MAX_INT64) continue;
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

/** A value as the client's `toJSON` writes it: blobs in base64 (integers are numbers here). */
const valueToJson = (v: unknown): unknown => (v instanceof ArrayBuffer ? Buffer.from(v).toString("base64") : v);

/** A result set as @libsql/client builds one for a statement that returns rows. */
function rowsResult(columns: string[], types: string[], rows: Record<string, unknown>[]): ResultSet {
  return {
    columns,
    columnTypes: types,
    rows: rows as never,
    rowsAffected: 0,
    lastInsertRowid: undefined,
    toJSON: () => ({ columns, columnTypes: types, rows: rows.map((r) => Array.prototype.map.call(r, valueToJson)), rowsAffected: 0, lastInsertRowid: null }),
  };
}

/** A result set as @libsql/client builds one for a statement that returns none: its rowid as a bigint even in "number" mode. */
function changesResult(changes: number, rowid: bigint): ResultSet {
  return {
    columns: [],
    columnTypes: [],
    rows: [],
    rowsAffected: changes,
    lastInsertRowid: rowid,
    toJSON: () => ({ columns: [], columnTypes: [], rows: [], rowsAffected: changes, lastInsertRowid: String(rowid) }),
  };
}

/**
 * A statement's answer before it is shaped as the client's ResultSet: plain values that a worker
 * can post (fast-writes.ts runs its batches on one). Integers are numbers, blobs ArrayBuffers.
 */
export type RawResult = { columns: string[]; types: string[]; rows: unknown[][] } | { changes: number; rowid: bigint };

/** A raw answer as @libsql/client shapes it (`rowMakers`: one per statement's columns, reused). */
export function shaped(raw: RawResult, makers = new Map<string, RowMaker>()): ResultSet {
  if ("changes" in raw) return changesResult(raw.changes, raw.rowid);
  const key = raw.columns.join("\u0000");
  let make = makers.get(key);
  if (!make) makers.set(key, (make = rowMaker(raw.columns)));
  return rowsResult(raw.columns, raw.types, raw.rows.map(make));
}

export type StatementCache = {
  /** Runs `sql` on the cache's connection, prepared once; throws libsql's own error (a SqliteError). */
  run(sql: string, args: unknown[]): ResultSet;
  /** `run`'s answer before it is shaped. */
  runRaw(sql: string, args: unknown[]): RawResult;
  /** Whether the connection is open and inside a transaction. */
  inTransaction(): boolean;
  /** Drops every statement and closes the connection; the next `run` opens a new one. */
  close(): void;
  readonly size: number;
  readonly bytes: number;
};

/**
 * Runs `stmts` in BEGIN IMMEDIATE … COMMIT on `cache`'s connection, every result complete before
 * COMMIT (a conversion error rolls back as in the client's batch). On any error it rolls back and
 * closes the connection before throwing: the client's path will ask for the write lock next, and a
 * failed statement may be left unreset (see write-gate.ts), so the next batch starts afresh.
 */
export function writeBatch(cache: StatementCache, stmts: { sql: string; args: unknown[] }[]): RawResult[] {
  try {
    cache.runRaw("BEGIN IMMEDIATE", []);
    const results = stmts.map((s) => cache.runRaw(s.sql, s.args));
    cache.runRaw("COMMIT", []);
    return results;
  } catch (err) {
    try {
      if (cache.inTransaction()) cache.runRaw("ROLLBACK", []);
    } catch {
      // Nothing better to do: the client's path will wait out its busy timeout and say so.
    }
    cache.close();
    throw err;
  }
}

/** A lazily opened connection to the file at `path`, with a statement cache bounded by `maxBytes`. */
export function statementCache(path: string, busyTimeoutMs: number, maxBytes = CACHE_MAX_BYTES): StatementCache {
  let db: InstanceType<typeof Database> | null = null;
  const cache = new Map<string, Prepared>();
  let cachedBytes = 0;

  function prepare(sql: string): Prepared {
    // The same options as the client's own connections: busy timeout, and libsql's defaults
    // (foreign_keys on, synchronous FULL in WAL) that it sets no differently.
    db ??= new Database(path, { timeout: busyTimeoutMs });
    const stmt = db.prepare(sql) as unknown as LibsqlStatement;
    stmt.safeIntegers(true);
    let returnsRows = true;
    try {
      stmt.raw(true);
    } catch {
      returnsRows = false; // raw() throws for a statement that returns no data, as the client relies on too
    }
    const cols = returnsRows ? stmt.columns() : [];
    const columns = cols.map((c) => c.name);
    return { stmt, make: returnsRows ? rowMaker(columns) : null, columns, types: cols.map((c) => c.type ?? ""), bytes: 0 };
  }

  /** Keeps `entry` as the most recently used, weighing `bytes`; the least recently used go first. */
  function keep(sql: string, entry: Prepared, bytes: number): void {
    if (bytes > maxBytes / 4) return;
    entry.bytes = bytes;
    cache.set(sql, entry);
    cachedBytes += bytes;
    for (const [oldest, old] of cache) {
      if (cachedBytes <= maxBytes) break;
      cache.delete(oldest);
      cachedBytes -= old.bytes;
    }
  }

  function run(sql: string, args: unknown[], raw: boolean): ResultSet | RawResult {
    let p = cache.get(sql);
    if (p) {
      cache.delete(sql);
      cachedBytes -= p.bytes;
    } else {
      p = prepare(sql);
    }
    keep(sql, p, statementBytes(sql) + boundBytes(args));
    if (p.make === null) {
      const info = p.stmt.run(args);
      const rowid = BigInt(info.lastInsertRowid);
      return raw ? { changes: info.changes, rowid } : changesResult(info.changes, rowid);
    }
    const rows = p.stmt.all(args);
    for (const values of rows) for (let i = 0; i < values.length; i++) values[i] = valueFromSql(values[i]);
    return raw ? { columns: p.columns, types: p.types, rows } : rowsResult(p.columns, p.types, rows.map(p.make));
  }

  return {
    run: (sql, args) => run(sql, args, false) as ResultSet,
    runRaw: (sql, args) => run(sql, args, true) as RawResult,
    inTransaction: () => db !== null && db.open && db.inTransaction,
    close() {
      cache.clear();
      cachedBytes = 0;
      db?.close();
      db = null;
    },
    get size() {
      return cache.size;
    },
    get bytes() {
      return cachedBytes;
    },
  };
}
