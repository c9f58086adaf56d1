import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { tempDir } from "../harness.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

describe("happy", () => {
  test("a local file opens in WAL mode with synchronous=FULL on every pooled connection", async () => {
    using dir = tempDir();
    const database = await openDatabase(`file:${join(dir.path, "v.db")}`);
    expect((await database.client.execute("PRAGMA journal_mode")).rows[0]?.journal_mode).toBe("wal");
    // A transaction holds one connection, so the next statement runs on another one.
    const tx = await database.client.transaction("write");
    const other = await database.client.execute("PRAGMA synchronous");
    expect(other.rows[0]?.synchronous).toBe(2); // 2 = FULL
    await tx.commit();
    database.close();
  });

  test("migrations create the schema once and record themselves", async () => {
    using dir = tempDir();
    const database = await openDatabase(`file:${join(dir.path, "v.db")}`);
    const first = await migrate(database.client);
    expect(first.applied.length).toBeGreaterThan(0);
    expect((await migrate(database.client)).applied).toEqual([]);
    const tables = await database.client.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    const names = tables.rows.map((r) => r.name);
    for (const t of ["organizations", "members", "api_keys", "environments", "tasks", "users"]) expect(names).toContain(t);
    database.close();
  });

  test("concurrent writers wait for each other instead of failing (busy timeout)", async () => {
    using dir = tempDir();
    const database = await openDatabase(`file:${join(dir.path, "v.db")}`);
    await database.client.execute("CREATE TABLE t (n INTEGER)");
    const tx = await database.client.transaction("write");
    await tx.execute("INSERT INTO t VALUES (1)");
    const waiting = database.client.execute("INSERT INTO t VALUES (2)");
    await Bun.sleep(100);
    await tx.commit();
    await waiting;
    expect((await database.client.execute("SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(2);
    database.close();
  });
});

describe("concurrency", () => {
  test("write transactions from this process and two others on one file all commit", async () => {
    using dir = tempDir();
    const url = `file:${join(dir.path, "v.db")}`;
    const db = await openDatabase(url);
    await db.client.execute("CREATE TABLE t (n INTEGER)");
    const fixture = join(import.meta.dir, "fixtures/db-writer.ts");
    const children = [1, 2].map((sign) => Bun.spawn([process.execPath, fixture, url, String(sign), "30"], { stderr: "inherit" }));
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const tx = await db.client.transaction("write");
        await tx.execute({ sql: "INSERT INTO t VALUES (?)", args: [1000 + i] });
        await Bun.sleep(1);
        await tx.execute({ sql: "INSERT INTO t VALUES (?)", args: [-1000 - i] });
        await tx.commit();
      }),
    );
    expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0]);
    const row = (await db.client.execute("SELECT count(*) AS n, sum(n) AS s FROM t")).rows[0];
    expect(row?.n).toBe(180);
    expect(row?.s).toBe(0);
    db.close();
  });
});
