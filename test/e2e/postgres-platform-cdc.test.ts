// Platform mode end to end, cdc: the real process, logical replication from the source, and the
// vectors kept in a pgvector table of that same database. The reconciling pass is pushed out to an
// hour, so every change seen here came through the change stream (our own writes to schema
// vecsync are WAL too, and must not feed back into it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../harness.ts";
import { eventuallyExact, eventuallyStatus, must, probe } from "./helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "./postgres-world.ts";
import { reflectedOn, streamedEdits } from "./scenarios.ts";
import { codesProbe, NEW_COLUMNS, NEW_CONFIG, OLD_CONFIG, PROBES, ROWS } from "./source.ts";

const BOUND_MS = 5_000;
let w: PgWorld;
let table: any;

beforeAll(async () => {
  w = await openPgWorld({ VECSYNC_SYNC_INTERVAL: "3600" }, { mode: "platform" });
  table = await createAndBackfill(w, tableBody(w, { sync_mode: "cdc" }));
  await eventuallyStatus(w.api, table.id, "synced", 20_000);
}, 40_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

const slots = () => w.pg.sql<{ slot_name: string; active: boolean }[]>`SELECT slot_name, active FROM pg_replication_slots WHERE database = current_database()`;
const status = async () => must(await w.api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200);
const storedIds = async () => (await w.pg.sql.unsafe(`SELECT id FROM ${table.platform_vector_ref} ORDER BY id`)).map((r) => Number(r.id));

const reflected = (change: () => Promise<unknown>, probes = PROBES, config = OLD_CONFIG) => reflectedOn(w, () => table.id, BOUND_MS)(change, probes, config);

describe("happy", () => {
  test("backfilled to synced into the platform table; queries exact; a replication slot holds the feed", async () => {
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200)).toMatchObject({ mode: "platform", sync_mode: "cdc", sync_status: "synced", total_rows: ROWS, synced_rows: ROWS });
    const rows = await w.readRows();
    for (const p of PROBES) expect(await probe(w.api, table.id, p, OLD_CONFIG, rows)).toBeNull();
    expect(await slots()).toHaveLength(1);
    expect(await status()).toMatchObject({ sync_status: "synced", rows_pending: 0, last_error: null });
  }, 20_000);

  test("insert, text update, metadata-only update, delete and emptied text arrive through the stream within seconds", async () => {
    const { took } = await streamedEdits(w, reflected);
    console.log(`platform cdc: commit to exact answers in ${took.join(", ")} ms`);
    const ids = await storedIds();
    expect(ids).toContain(2000);
    expect(ids).not.toContain(23);
    expect(ids).not.toContain(24);
    expect(ids.filter((id) => id >= 61 && id <= 70)).toEqual([]);
    expect(await status()).toMatchObject({ sync_status: "synced", rows_pending: 0, staleness_secs: 0, last_error: null });
  }, 40_000);

  test("paused: the consumer lets go of the slot and changes wait; resumed: caught up", async () => {
    const before = await w.readRows();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`), 200);
    await eventually(async () => (await slots()).every((s) => !s.active), 5_000, 50);
    await w.pg.sql`INSERT INTO docs VALUES (2001, 'paused period insert', 'while paused', 'food', 1, 1, true, 'r2001')`;
    const watch = codesProbe(["r2001", "r26"], "paused period insert changed");
    await Bun.sleep(500);
    expect(await probe(w.api, table.id, watch, OLD_CONFIG, before)).toBeNull();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`), 200);
    await eventuallyExact(w.api, table.id, [watch, ...PROBES], OLD_CONFIG, w.readRows, BOUND_MS);
  }, 20_000);

  test("PUT: the re-backfill swaps a new table in; the stream goes on into it", async () => {
    must(await w.api.call("PUT", `/v1/vector-tables/${table.id}`, { columns: NEW_COLUMNS, embedding_dimensions: 96 }), 200);
    await eventuallyStatus(w.api, table.id, "synced", 30_000);
    const rows = await w.readRows();
    for (const p of PROBES.slice(0, 6)) expect(await probe(w.api, table.id, p, NEW_CONFIG, rows)).toBeNull();
    await reflected(() => w.pg.sql`UPDATE docs SET body = 'streamed after the swap' WHERE id = 27`, [codesProbe(["r27", "r28"], "streamed after the swap")], NEW_CONFIG);
  }, 45_000);

  test("TRUNCATE empties the platform table; rows inserted after it arrive", async () => {
    await reflected(() => w.pg.sql`TRUNCATE docs`, [PROBES[3]!], NEW_CONFIG);
    expect(await storedIds()).toEqual([]);
    await reflected(() => w.pg.sql`INSERT INTO docs VALUES (1, 'after truncate', 'fresh start', 'tech', 1, 1, true, 'r1')`, [codesProbe(["r1"])], NEW_CONFIG);
    expect(await storedIds()).toEqual([1]);
  }, 20_000);

  test("DELETE that cannot drop the platform table (a view of the customer's uses it): 502, the table kept and streaming", async () => {
    await w.pg.sql.unsafe(`CREATE VIEW public.customer_view AS SELECT id FROM ${table.platform_vector_ref}`);
    const refused = await w.api.call("DELETE", `/v1/vector-tables/${table.id}`);
    expect({ status: refused.status, code: refused.body?.error?.code }).toEqual({ status: 502, code: "source_error" });
    // Its feed was freed before the drop failed: the table resumes, recreates it and streams again.
    await reflected(() => w.pg.sql`UPDATE docs SET body = 'streamed after a refused delete' WHERE id = 1`, [codesProbe(["r1"], "streamed after a refused delete")], NEW_CONFIG);
    expect(await slots()).toHaveLength(1);
    await w.pg.sql`DROP VIEW public.customer_view`;
  }, 30_000);

  test("DELETE frees the replication slot and the publication, and drops the platform table", async () => {
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    await eventually(async () => (await slots()).length === 0, 5_000, 50);
    expect(await w.pg.sql`SELECT pubname FROM pg_publication`).toHaveLength(0);
    expect(await w.pg.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'vecsync'`).toHaveLength(0);
  });
});
