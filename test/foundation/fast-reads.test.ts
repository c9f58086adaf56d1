// The read connection of src/db/fast-reads.ts: a plain SELECT answers exactly what @libsql/client
// answers (same rows by name and by index, same columns, same integers and blobs), sees every
// committed write at once (autocommit, transactions, batches), and fails the way the client does.
// The write connection of src/db/fast-writes.ts: a plain write batch answers what the client
// answers, all or nothing, with the client's errors, inside the write gate.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, LibsqlBatchError, LibsqlError, type Client, type InStatement, type ResultSet } from "@libsql/client";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { CACHED } from "../../src/db/fast-reads.ts";
import { THREAD_MIN_BYTES, WRITES_CACHED, WRITES_CACHED_BYTES, WRITES_CLOSED } from "../../src/db/fast-writes.ts";
import { writesOnLoop } from "../../src/shared/write-place.ts";
import { CACHE_MAX_BYTES, statementCache } from "../../src/db/statement-cache.ts";
import { tempDir, type TempDir } from "../harness.ts";

let dir: TempDir;
let db: Database;
let plain: Client;

beforeAll(async () => {
  dir = tempDir();
  const url = `file:${join(dir.path, "reads.db")}`;
  db = await openDatabase(url);
  plain = createClient({ url, intMode: "number" });
  await db.client.execute("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, f REAL, b BLOB, s TEXT)");
  await db.client.execute({ sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?)", args: ["a", 9007199254740991, 1.5, new Uint8Array([1, 2, 3]), null] });
  await db.client.execute({ sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?)", args: ["b", -3, 0, new Uint8Array([]), "x"] });
});

afterAll(() => {
  plain.close();
  db.close();
  dir[Symbol.dispose]();
});

const shape = (rs: Awaited<ReturnType<Client["execute"]>>) => ({
  columns: rs.columns,
  byName: rs.rows.map((r) => ({ ...r })),
  byIndex: rs.rows.map((r) => Array.prototype.slice.call(r).map((v) => (v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v))),
  keys: rs.rows.map((r) => Object.keys(r)),
  length: rs.rows.map((r) => r.length),
  json: JSON.stringify(rs.rows.map((r) => ({ ...r, b: undefined }))),
});

test("a local file's plain reads take the read connection, each statement prepared once", async () => {
  const cached = () => (db.client as unknown as Record<symbol, number>)[CACHED]!;
  const before = cached();
  for (let i = 0; i < 3; i++) await db.client.execute({ sql: "SELECT n FROM t WHERE id = ? AND 1 = 1", args: ["a"] });
  expect(cached()).toBe(before + 1);
  await db.client.execute("UPDATE t SET f = f WHERE id = 'a'"); // writes stay with the client
  expect(cached()).toBe(before + 1);
});

describe("the same answers as @libsql/client", () => {
  for (const [name, sql, args] of [
    ["every column type, by key", "SELECT * FROM t WHERE id = ?", ["a"]],
    ["several rows, ordered", "SELECT id, n, s FROM t ORDER BY id", []],
    ["a repeated column name keeps the first", "SELECT id, n AS id FROM t ORDER BY id", []],
    ["no rows", "SELECT * FROM t WHERE id = ?", ["zz"]],
    ["an expression", "select count(*) AS c, max(n) FROM t", []],
  ] as const) {
    test(name, async () => {
      const fast = await db.client.execute({ sql, args: [...args] });
      const slow = await plain.execute({ sql, args: [...args] });
      expect(shape(fast)).toEqual(shape(slow));
    });
  }

  test("an integer past 2^53 throws the same RangeError", async () => {
    await db.client.execute("INSERT INTO t VALUES ('big', 9007199254740993, 0, NULL, NULL)");
    const sql = "SELECT n FROM t WHERE id = 'big'";
    await expect(plain.execute(sql)).rejects.toBeInstanceOf(RangeError);
    await expect(db.client.execute(sql)).rejects.toBeInstanceOf(RangeError);
    await db.client.execute("DELETE FROM t WHERE id = 'big'");
  });

  test("a missing table fails as a LibsqlError, as the client's own path does", async () => {
    const err = await db.client.execute("SELECT * FROM nowhere").catch((e) => e);
    expect(err).toBeInstanceOf(LibsqlError);
    expect(String(err.message)).toContain("no such table");
  });
});

describe("reads see every committed write at once", () => {
  const read = async () => (await db.client.execute({ sql: "SELECT s FROM t WHERE id = ?", args: ["b"] })).rows[0]!.s;

  test("autocommit, transaction, batch, and another connection's commit", async () => {
    expect(await read()).toBe("x");
    await db.client.execute("UPDATE t SET s = 'one' WHERE id = 'b'");
    expect(await read()).toBe("one");
    const tx = await db.client.transaction("write");
    await tx.execute("UPDATE t SET s = 'two' WHERE id = 'b'");
    expect(await read()).toBe("one"); // not yet committed
    await tx.commit();
    expect(await read()).toBe("two");
    await db.client.batch(["UPDATE t SET s = 'three' WHERE id = 'b'"], "write");
    expect(await read()).toBe("three");
    await plain.execute("UPDATE t SET s = 'four' WHERE id = 'b'");
    expect(await read()).toBe("four");
  });

  test("a table dropped and made again under a cached statement", async () => {
    await db.client.execute("CREATE TABLE u (k TEXT)");
    await db.client.execute("INSERT INTO u VALUES ('first')");
    expect((await db.client.execute("SELECT k FROM u")).rows.map((r) => r.k)).toEqual(["first"]);
    await db.client.execute("DROP TABLE u");
    await expect(db.client.execute("SELECT k FROM u")).rejects.toBeInstanceOf(LibsqlError);
    await db.client.execute("CREATE TABLE u (k TEXT, extra INTEGER)");
    await db.client.execute("INSERT INTO u VALUES ('second', 1)");
    expect((await db.client.execute("SELECT k FROM u")).rows.map((r) => r.k)).toEqual(["second"]);
  });
});

describe("write batches", () => {
  // Two files in the same state: one behind openDatabase, one behind the bare client.
  let fast: Database;
  let bare: Client;
  const writesCached = () => (fast.client as unknown as Record<symbol, number>)[WRITES_CACHED]!;
  const schema = "CREATE TABLE w (id INTEGER PRIMARY KEY, k TEXT UNIQUE, n INTEGER, b BLOB)";
  const both = (stmts: InStatement[], mode?: "write" | "deferred") => Promise.all([fast.client.batch(stmts, mode), bare.batch(stmts, mode)]);
  const results = (rss: ResultSet[]) =>
    rss.map((rs) => ({ ...shape(rs), types: rs.columnTypes, rowsAffected: rs.rowsAffected, lastInsertRowid: rs.lastInsertRowid, json: JSON.stringify(rs) }));
  const count = async () => Number((await fast.client.execute("SELECT count(*) AS c FROM w")).rows[0]!.c);

  beforeAll(async () => {
    fast = await openDatabase(`file:${join(dir.path, "w-fast.db")}`);
    bare = createClient({ url: `file:${join(dir.path, "w-bare.db")}`, intMode: "number" });
    for (const c of [fast.client, bare]) await c.execute(schema);
  });
  afterAll(() => {
    bare.close();
    fast.close();
  });

  test("answer what the client answers: changes, rowids, returned rows, in every statement form and mode", async () => {
    const before = writesCached();
    const blob = new Uint8Array([7, 8, 9]);
    for (const mode of ["write", "deferred", undefined] as const) {
      const tag = String(mode);
      const stmts: InStatement[] = [
        { sql: "INSERT INTO w (k, n, b) VALUES (?, ?, ?)", args: [`${tag}-a`, 9007199254740990n, blob] },
        { sql: "INSERT INTO w (k, n) VALUES (?, ?), (?, ?) RETURNING id, k, n AS k", args: [`${tag}-b`, 2, `${tag}-c`, -3] },
        { sql: "UPDATE w SET n = n + 1 WHERE k LIKE ?", args: [`${tag}-%`] },
        { sql: "UPDATE w SET n = 0 WHERE k = ?", args: ["nobody"] },
        { sql: "SELECT id, k, n, b FROM w WHERE k LIKE ? ORDER BY id", args: [`${tag}-%`] },
        { sql: "DELETE FROM w WHERE k = ? RETURNING id", args: [`${tag}-c`] },
        ["INSERT INTO w (k) VALUES (?)", [`${tag}-d`]] as unknown as InStatement,
        `INSERT INTO w (k) VALUES ('${tag}-e')` as unknown as InStatement,
      ];
      const [got, want] = await both(stmts, mode);
      expect(results(got)).toEqual(results(want));
      expect(typeof got[0]!.lastInsertRowid).toBe("bigint");
    }
    // Prepared once each: the 7 parameterised statements, the 3 literal ones (one a mode), BEGIN IMMEDIATE and COMMIT.
    expect(writesCached()).toBe(before + 7 + 3 + 2);
    await both([{ sql: "INSERT INTO w (k) VALUES (?)", args: ["again"] }]);
    expect(writesCached()).toBe(before + 12);
  });

  test("a batch binding THREAD_MIN_BYTES or more runs on the write thread and answers the same", async () => {
    // A row's vector is often a view inside a larger buffer: only its own bytes are posted and written.
    const inChunk = new Uint8Array(new ArrayBuffer(3 * THREAD_MIN_BYTES), THREAD_MIN_BYTES, THREAD_MIN_BYTES);
    inChunk.forEach((_, i) => (inChunk[i] = i % 251));
    const stmts: InStatement[] = [
      { sql: "INSERT INTO w (k, n, b) VALUES (?, ?, ?) RETURNING id, k", args: ["thread-a", 1, inChunk] },
      { sql: "SELECT k, b FROM w WHERE k = ? -- read back on the thread", args: ["thread-a"] },
    ];
    const before = writesCached();
    const [got, want] = await both(stmts, "write");
    expect(results(got)).toEqual(results(want));
    expect(new Uint8Array(got[1]!.rows[0]!.b as ArrayBuffer)).toEqual(inChunk.slice());
    // The thread's own statement cache: the two statements, BEGIN IMMEDIATE and COMMIT.
    expect(writesCached()).toBe(before + 4);
  });

  test("a large batch made within writesOnLoop runs on the event loop, with no turn of it", async () => {
    const big = new Uint8Array(THREAD_MIN_BYTES);
    const stmts = (k: string): InStatement[] => [{ sql: "INSERT INTO w (k, b) VALUES (?, ?) -- the stream's", args: [k, big] }];
    // The thread answers by a message, a later turn of the loop; the loop's own write within this one.
    const turnedDuring = async (write: () => Promise<unknown>) => {
      let turned = false;
      const immediate = setImmediate(() => (turned = true));
      await write();
      clearImmediate(immediate);
      return turned;
    };
    expect(await turnedDuring(() => writesOnLoop(() => fast.client.batch(stmts("kept-a"), "write")))).toBe(false);
    expect(await turnedDuring(() => fast.client.batch(stmts("kept-b"), "write"))).toBe(true);
    expect((await fast.client.execute("SELECT count(*) AS n FROM w WHERE k LIKE 'kept-%'")).rows[0]!.n).toBe(2);
  });

  test("drizzle's and the vector store's argument types take the path; others, and DDL, stay with the client", async () => {
    const before = writesCached();
    await fast.client.batch([{ sql: "INSERT INTO w (k, n) VALUES (?, ?)", args: ["flag", true] }], "write");
    await fast.client.batch(["CREATE TABLE IF NOT EXISTS other (x)", "INSERT INTO other VALUES (1)"], "write");
    await fast.client.batch([{ sql: "INSERT INTO w (k, n) VALUES (:k, 1)", args: { k: "named" } }], "write");
    expect(writesCached()).toBe(before);
    expect((await fast.client.execute("SELECT n FROM w WHERE k = 'flag'")).rows[0]!.n).toBe(1);
  });

  test("a failing statement rolls back the whole batch and fails as the client's batch does", async () => {
    for (const c of [fast.client, bare]) await c.execute("INSERT INTO w (k) VALUES ('taken')");
    const n = await count();
    for (const [bad, code] of [
      ["INSERT INTO w (k) VALUES ('taken')", "SQLITE_CONSTRAINT"],
      ["INSERT INTO nowhere VALUES (1)", "SQLITE_ERROR"],
    ] as const) {
      const stmts = ["INSERT INTO w (k) VALUES ('first')", "UPDATE w SET n = 42", bad, "INSERT INTO w (k) VALUES ('last')"];
      const got = await fast.client.batch(stmts, "write").catch((e) => e);
      const want = await bare.batch(stmts, "write").catch((e) => e);
      expect(got).toBeInstanceOf(LibsqlBatchError);
      expect([got.code, got.extendedCode, got.statementIndex, got.message]).toEqual([code, want.extendedCode, 2, want.message]);
      expect(want.code).toBe(code);
      expect(await count()).toBe(n);
      expect((await fast.client.execute("SELECT count(*) AS c FROM w WHERE n = 42")).rows[0]!.c).toBe(0);
    }
    // The write connection starts afresh and takes the next batch.
    await fast.client.batch(["INSERT INTO w (k) VALUES ('after')"], "write");
    expect(await count()).toBe(n + 1);
  });

  test("a read right after a batch sees it", async () => {
    for (let i = 0; i < 20; i++) {
      await fast.client.batch([{ sql: "INSERT INTO w (k, n) VALUES (?, ?)", args: [`seen-${i}`, i] }], "write");
      const rs = await fast.client.execute({ sql: "SELECT n FROM w WHERE k = ?", args: [`seen-${i}`] });
      expect(rs.rows[0]?.n).toBe(i);
    }
  });

  test("a batch waits for an open write transaction of the client (it runs inside the write gate)", async () => {
    const tx = await fast.client.transaction("write");
    await tx.execute("INSERT INTO w (k) VALUES ('tx')");
    const started = performance.now();
    const waiting = fast.client.batch(["UPDATE w SET n = 7 WHERE k = 'tx'"], "write");
    await Bun.sleep(50);
    await tx.commit();
    const [rs] = await waiting;
    expect(rs!.rowsAffected).toBe(1);
    expect(performance.now() - started).toBeLessThan(2_000); // not SQLite's busy timeout
  });

  test("a statement too large to keep runs without being kept", async () => {
    const before = writesCached();
    const padding = "x".repeat((CACHE_MAX_BYTES / 4 / 72) | 0);
    const [rs] = await fast.client.batch([`UPDATE w SET n = n WHERE k = 'big' /* ${padding} */`], "write");
    expect(rs!.rowsAffected).toBe(0);
    expect(writesCached()).toBe(before);
    expect((fast.client as unknown as Record<symbol, number>)[WRITES_CACHED_BYTES]).toBeLessThanOrEqual(CACHE_MAX_BYTES);
  });

  test("close closes every connection, and the closed client says so", async () => {
    const path = join(dir.path, "w-close.db");
    const one = await openDatabase(`file:${path}`);
    await one.client.execute("CREATE TABLE c (x)");
    await one.client.batch(["INSERT INTO c VALUES (1)"], "write");
    await one.client.execute("SELECT x FROM c");
    one.close();
    // The write thread closes its connection and ends on its own time.
    await (one.client as unknown as Record<symbol, Promise<void>>)[WRITES_CLOSED];
    await expect(one.client.batch(["INSERT INTO c VALUES (2)"], "write")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    await expect(one.client.execute("SELECT x FROM c")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    // Leaving WAL needs every other connection to the file gone. libsql closes a connection
    // only once its statements are collected, so nothing of ours may still hold one.
    for (let i = 0; i < 5; i++) {
      Bun.gc(true);
      await Bun.sleep(20);
    }
    const after = createClient({ url: `file:${path}`, intMode: "number" });
    expect((await after.execute("PRAGMA journal_mode = DELETE")).rows[0]!.journal_mode).toBe("delete");
    expect((await after.execute("SELECT count(*) AS c FROM c")).rows[0]!.c).toBe(1);
    after.close();
  });
});

test("the statement cache stays within its bound, least recently used out first, bound arguments counted", () => {
  const max = 200 * 1024;
  const cache = statementCache(join(dir.path, "bound.db"), 1000, max);
  const sql = (i: number) => `SELECT ${i} AS v`;
  for (let i = 0; i < 50; i++) {
    cache.run(sql(i), []);
    cache.run(sql(0), []); // kept in use
    expect(cache.bytes).toBeLessThanOrEqual(max);
  }
  expect(cache.size).toBeGreaterThan(5);
  expect(cache.size).toBeLessThan(50);
  const size = cache.size;
  cache.run(sql(0), []); // still cached: no growth
  expect(cache.size).toBe(size);
  cache.run(sql(1), []); // evicted long ago: comes back in place of the oldest
  expect(cache.size).toBe(size);
  // What a statement binds stays with it until it runs again, so it weighs in too.
  const bytes = cache.bytes;
  cache.run("SELECT length(?) AS n", [new Uint8Array(20_000)]);
  const withBlob = cache.bytes;
  cache.run("SELECT length(?) AS n", [new Uint8Array(10)]);
  expect(withBlob - cache.bytes).toBe(20_000 - 10);
  expect(cache.run("SELECT length(?) AS n", [new Uint8Array(max / 4)]).rows[0]!.n).toBe(max / 4); // too heavy to keep
  expect(cache.bytes).toBeLessThanOrEqual(bytes);
  cache.close();
  expect([cache.size, cache.bytes]).toEqual([0, 0]);
});
