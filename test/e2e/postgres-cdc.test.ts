// The main job end to end, cdc mode: the real process, a real Postgres source with logical
// replication, the `local` model. The reconciling hash pass is pushed out to an hour, so every
// change seen here came through the change stream, within a few seconds of its commit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../harness.ts";
import { eventuallyExact, eventuallyStatus, must, probe } from "./helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "./postgres-world.ts";
import { reflectedOn, streamedEdits } from "./scenarios.ts";
import { codesProbe, OLD_CONFIG, PROBES, ROWS } from "./source.ts";

const BOUND_MS = 5_000;
let w: PgWorld;
let table: any;

beforeAll(async () => {
  w = await openPgWorld({ VECSYNC_SYNC_INTERVAL: "3600" });
  table = await createAndBackfill(w, tableBody(w, { sync_mode: "cdc" }));
  await eventuallyStatus(w.api, table.id, "synced");
}, 30_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

const slots = () => w.pg.sql<{ slot_name: string; active: boolean }[]>`SELECT slot_name, active FROM pg_replication_slots WHERE database = current_database()`;
const status = async () => must(await w.api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200);

const reflected = (change: () => Promise<unknown>, probes = PROBES) => reflectedOn(w, () => table.id, BOUND_MS)(change, probes);

describe("happy", () => {
  test("backfilled to synced; queries exact; a replication slot holds the feed; status caught up", async () => {
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200)).toMatchObject({ sync_mode: "cdc", sync_status: "synced", total_rows: ROWS, synced_rows: ROWS });
    const rows = await w.readRows();
    for (const p of PROBES) expect(await probe(w.api, table.id, p, OLD_CONFIG, rows)).toBeNull();
    expect(await slots()).toHaveLength(1);
    expect(await status()).toMatchObject({ sync_status: "synced", rows_pending: 0, staleness_secs: 0, last_error: null });
  }, 20_000);

  test("insert, text update, metadata-only update, delete and emptied text arrive through the stream within seconds", async () => {
    const { took, touched } = await streamedEdits(w, reflected);
    console.log(`cdc: commit to exact answers in ${took.join(", ")} ms`);
    const answer = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, touched.body), 200);
    expect(answer.results.map((r: { id: string }) => r.id).sort()).toEqual(["2000", "21", "22", "25"]);
    const s = await status();
    expect(s).toMatchObject({ sync_status: "synced", rows_pending: 0, staleness_secs: 0, last_error: null, last_error_at: null });
    expect(Date.parse(s.last_sync_at)).toBeGreaterThan(Date.now() - 10_000);
  }, 40_000);

  test("paused: the consumer lets go of the slot and changes wait; resumed: caught up through the stream", async () => {
    const before = await w.readRows();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`), 200);
    await eventually(async () => (await slots()).every((s) => !s.active), 5_000, 50);
    await w.pg.sql`INSERT INTO docs VALUES (2001, 'paused period insert', 'while paused', 'food', 1, 1, true, 'r2001')`;
    await w.pg.sql`UPDATE docs SET title = 'changed while paused' WHERE id = 26`;
    const watch = codesProbe(["r2001", "r26"], "paused period insert changed");
    await Bun.sleep(500); // a few poll periods: nothing may apply them
    expect(await probe(w.api, table.id, watch, OLD_CONFIG, before)).toBeNull();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`), 200);
    await eventuallyExact(w.api, table.id, [watch, ...PROBES], OLD_CONFIG, w.readRows, BOUND_MS);
    expect(await status()).toMatchObject({ sync_status: "synced", rows_pending: 0, staleness_secs: 0 });
  }, 20_000);

  test("TRUNCATE empties the collection; rows inserted after it arrive", async () => {
    await reflected(() => w.pg.sql`TRUNCATE docs`, [PROBES[3]!]);
    const empty = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "vector search", limit: 100 }), 200);
    expect(empty).toMatchObject({ results: [], total_results: 0 });
    await reflected(() => w.pg.sql`INSERT INTO docs VALUES (1, 'after truncate', 'fresh start', 'tech', 1, 1, true, 'r1'), (2, 'second fresh', null, null, null, null, null, 'r2')`, [PROBES[3]!, codesProbe(["r1", "r2"])]);
    expect(await status()).toMatchObject({ sync_status: "synced", rows_pending: 0, staleness_secs: 0, last_error: null });
  }, 20_000);

  test("DELETE frees the replication slot and the publication", async () => {
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    expect((await w.api.call("GET", `/v1/vector-tables/${table.id}`)).status).toBe(404);
    await eventually(async () => (await slots()).length === 0, 5_000, 50);
    expect(await w.pg.sql`SELECT pubname FROM pg_publication`).toHaveLength(0);
  });
});
