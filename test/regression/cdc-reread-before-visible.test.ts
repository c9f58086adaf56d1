// Regression: CDC lost changes now and then (found by test/e2e/postgres-cdc.test.ts). The
// walsender sends a commit once its WAL record is flushed, a moment before the transaction
// leaves the server's running list; the consumer re-reads the batch's keys at once, and a read in
// that moment saw the OLD row, stored it and acknowledged the change: lost until the next hash
// pass, with staleness reported as 0. The feed now hands a batch out only once a fresh snapshot
// sees its transaction. Here: many single-row commits, each re-read the instant its batch arrives.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { createPostgresSource } from "../../src/drivers/sources/postgres.ts";
import { parseSnapshot, sees, widen } from "../../src/drivers/sources/postgres-visibility.ts";
import { positionOnly, type ChangeBatch, type ChangeStream } from "../../src/drivers/sources/types.ts";
import { PG_ADMIN_URL, throwawayPostgres } from "../harness.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

async function nextBatch(stream: ChangeStream): Promise<ChangeBatch> {
  const timeout = Bun.sleep(5_000).then(() => Promise.reject(new Error("no change batch within 5 s")));
  for (;;) {
    const result = await Promise.race([stream[Symbol.asyncIterator]().next(), timeout]);
    if (result.done) throw new Error("change stream ended");
    if (!positionOnly(result.value)) return result.value; // a position-only batch moves past other WAL
  }
}

describe("happy", () => {
  test("a batch's keys re-read the moment it arrives show the committed values, every time", async () => {
    await using pg = await throwawayPostgres();
    const admin = new URL(PG_ADMIN_URL);
    const source = createPostgresSource({ host: "127.0.0.1", port: Number(admin.port || 5432), database: pg.name, user: admin.username || "postgres", password: "" });
    await pg.sql`CREATE TABLE docs (id integer PRIMARY KEY, title text)`;
    await pg.sql`INSERT INTO docs SELECT g, 'old ' || g FROM generate_series(1, 50) g`;
    const target = { stream: "visibility", table: "docs", pk: ["id"] };
    const { checkpoint } = await source.prepareCdc(target);
    const stream = await source.changes(target, checkpoint);
    const stale: string[] = [];
    try {
      for (let i = 1; i <= 300; i++) {
        const id = 1 + (i % 50);
        // Not awaited: the re-read must race the committing session, as the service's consumer does.
        const update = pg.sql`UPDATE docs SET title = ${`new ${i}`} WHERE id = ${id}`.execute();
        const batch = await nextBatch(stream);
        const [row] = await source.fetchByKeys({ table: "docs", pk: ["id"], columns: ["title"], keys: batch.keys });
        await update;
        if (row?.values.title !== `new ${i}`) stale.push(`update ${i}: read ${JSON.stringify(row?.values.title)}`);
        await stream.ack(batch.checkpoint);
      }
    } finally {
      await stream.close();
      await source.teardownCdc(target);
      await source.close();
    }
    expect(stale).toEqual([]);
  }, 30_000);

  test("visibility from a snapshot: below xmin, below xmax and not running; xids widened by epoch", () => {
    const snap = parseSnapshot("4294967400:4294967410:4294967403,4294967405");
    expect(snap).toEqual({ xmin: 4294967400n, xmax: 4294967410n, running: new Set([4294967403n, 4294967405n]) });
    expect(widen(104, snap.xmax)).toBe(4294967400n); // epoch 1: 2^32 + 104
    expect(widen(4294967290, snap.xmax)).toBe(4294967290n); // just before the wrap: epoch 0
    expect(sees(snap, widen(103, snap.xmax))).toBe(true); // below xmin
    expect(sees(snap, widen(107, snap.xmax))).toBe(false); // running
    expect(sees(snap, widen(108, snap.xmax))).toBe(true); // completed, below xmax
    expect(sees(snap, widen(114, snap.xmax))).toBe(false); // at or past xmax: not yet
  });
});
