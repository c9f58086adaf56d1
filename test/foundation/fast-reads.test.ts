// The read connection of src/db/fast-reads.ts: a plain SELECT answers exactly what @libsql/client
// answers (same rows by name and by index, same columns, same integers and blobs), sees every
// committed write at once (autocommit, transactions, batches), and fails the way the client does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, LibsqlError, type Client } from "@libsql/client";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { CACHED } from "../../src/db/fast-reads.ts";
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
