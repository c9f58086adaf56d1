// Regression: DELETE of a cdc table could leave its replication slot on the source for good. The
// delete stopped the consumer and freed the feed, then removed the record; a consumers tick (every
// second) in between still saw a table that wanted a consumer and started one, which found its
// feed missing and recreated it (the self-healing of a lost feed). The slot it made outlived the
// record and held the source's WAL from then on. The same window opened for every table of an
// organization being deleted. Found as a flaky teardown: DROP DATABASE refused, "used by an
// active logical replication slot". Now a table whose feed was freed gets no consumer again
// (sync/state.ts `retired`) unless it is resumed, which a DELETE that fails does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../harness.ts";
import { consumersTick, stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../src/domains/sync/state.ts";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { createWorld, streamingTable, tableRow, type World } from "../domains/sync/world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 200 });
  table = await streamingTable(w, 60_000);
});
afterAll(async () => {
  await w.dispose();
});

const feed = async () => {
  const [row] = await w.sql<{ slots: number; active: number; publications: number }[]>`
    SELECT (SELECT count(*)::int FROM pg_replication_slots WHERE database = current_database()) AS slots,
           (SELECT count(*)::int FROM pg_replication_slots WHERE database = current_database() AND active) AS active,
           (SELECT count(*)::int FROM pg_publication) AS publications`;
  return row!;
};

describe("happy", () => {
  test("a tick between freeing the feed and removing the record starts no consumer; a resume does", async () => {
    await eventually(async () => (await feed()).active === 1, 10_000);
    await stopSyncFor(w.services, (await tableRow(w, table.id))!);
    expect(await feed()).toEqual({ slots: 0, active: 0, publications: 0 });
    // What the scheduler runs every second, at the worst moment: the record still wants a consumer.
    await consumersTick(w.services);
    expect(syncState(w.services).consumers.has(table.id)).toBe(false);
    expect(await feed()).toEqual({ slots: 0, active: 0, publications: 0 });
    // A DELETE that failed keeps its table, which resumes: the consumer recreates the feed.
    w.services.engine.resumed((await tableRow(w, table.id))!);
    expect(await eventually(async () => (await feed()).active === 1 && (await feed()), 15_000)).toEqual({ slots: 1, active: 1, publications: 1 });
  });

  test("DELETE over HTTP frees the feed, and no tick brings it back", async () => {
    const res = await w.app.request("DELETE", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key });
    expect(res.status).toBe(204);
    await consumersTick(w.services);
    expect(syncState(w.services).consumers.size).toBe(0);
    expect(await feed()).toEqual({ slots: 0, active: 0, publications: 0 });
  });
});
