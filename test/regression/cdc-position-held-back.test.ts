// Regression: an idle cdc table's position stalled for seconds (found writing read-your-writes,
// docs/vector-tables.md#read-your-writes). The feed hands out at most one position-only batch a
// second and dropped a keepalive that came sooner; the server reports a position once, when its
// WAL moves, so WAL of other tables committed within a second of the last position stayed unseen
// until more WAL came: a query asking for `min_synced_through` = pg_current_wal_lsn() after such a
// commit answered 409. The feed now holds such a position back until the second is over. Here:
// commits to another table, each right after the previous position arrived, each seen within
// 2.5 s. (Other databases' WAL on a busy test cluster can hide the old stall; on a quiet one the
// old feed failed this every time.)
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { createPostgresSource } from "../../src/drivers/sources/postgres.ts";
import { lsnToBigInt } from "../../src/drivers/sources/pgoutput.ts";
import type { ChangeStream } from "../../src/drivers/sources/types.ts";
import { PG_ADMIN_URL, throwawayPostgres } from "../harness.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

/** Acknowledges batches as the consumer does until one reaches `lsn`; how long that took (ms). */
async function reach(stream: ChangeStream, lsn: string, withinMs: number): Promise<number> {
  const started = performance.now();
  const it = stream[Symbol.asyncIterator]();
  const timeout = Bun.sleep(withinMs).then(() => Promise.reject(new Error(`position ${lsn} not reached within ${withinMs} ms`)));
  for (;;) {
    const result = await Promise.race([it.next(), timeout]);
    if (result.done) throw new Error("change stream ended");
    await stream.ack(result.value.checkpoint);
    if (lsnToBigInt(result.value.checkpoint) >= lsnToBigInt(lsn)) return performance.now() - started;
  }
}

describe("happy", () => {
  test("WAL of other tables committed in quick succession moves the position within about a second each", async () => {
    await using pg = await throwawayPostgres();
    const admin = new URL(PG_ADMIN_URL);
    const source = createPostgresSource({ host: "127.0.0.1", port: Number(admin.port || 5432), database: pg.name, user: admin.username || "postgres", password: "" });
    await pg.sql`CREATE TABLE docs (id integer PRIMARY KEY, title text)`;
    await pg.sql`CREATE TABLE elsewhere (id serial PRIMARY KEY, note text)`;
    const target = { stream: "held_back", table: "docs", pk: ["id"] };
    const { checkpoint } = await source.prepareCdc(target);
    const stream = await source.changes(target, checkpoint);
    try {
      for (let i = 0; i < 4; i++) {
        await pg.sql`INSERT INTO elsewhere (note) VALUES ('not synced')`;
        const lsn = (await pg.sql<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!.lsn;
        expect(await reach(stream, lsn, 2_500)).toBeLessThan(2_500);
      }
    } finally {
      await stream.close();
      await source.teardownCdc(target);
      await source.close();
    }
  });
});
