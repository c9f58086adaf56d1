// The main job end to end, batch mode: the real process over HTTP, a real Postgres source, the
// `local` model. Sign-up → connection, provider, vector table → backfill → queries exact against a
// brute-force expectation → source changes picked up by sync passes → pause (queries still
// answer, changes wait) → resume → PUT (rebackfill with queries answering throughout from one
// whole configuration, never a mix) → DELETE (404, collection gone).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/client.ts";
import { openVectorStore } from "../../src/services.ts";
import { createLogger } from "../../src/shared/log.ts";
import { eventually } from "../harness.ts";
import { eventuallyExact, eventuallyStatus, must, probe } from "./helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "./postgres-world.ts";
import { queriesDuringRebackfill, sourceEdits } from "./scenarios.ts";
import { codesProbe, NEW_COLUMNS, NEW_CONFIG, OLD_CONFIG, PROBES, ROWS, TIED } from "./source.ts";

let w: PgWorld;
let table: any;
/** A second batch table over the same source: its passes show time has passed for the paused one. */
let witness: any;

beforeAll(async () => {
  w = await openPgWorld();
  table = await createAndBackfill(w, tableBody(w));
  witness = await createAndBackfill(w, tableBody(w, { name: "witness" }));
  await eventuallyStatus(w.api, table.id, "synced");
  await eventuallyStatus(w.api, witness.id, "synced");
}, 30_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

const exactNow = (id: string, probes = PROBES, config = OLD_CONFIG, timeoutMs = 10_000) => eventuallyExact(w.api, id, probes, config, w.readRows, timeoutMs);

describe("happy", () => {
  test("created pending with the collection name; backfilled to synced with every row counted", async () => {
    expect(table).toMatchObject({ sync_status: "pending", total_rows: 0, synced_rows: 0, mode: "managed", sync_mode: "batch", embedding_dimensions: 64 });
    expect(table.vectorstore_collection).toBe(`vt_${table.id.slice(0, 8)}_docs`);
    const got = must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200);
    expect(got).toMatchObject({ sync_status: "synced", total_rows: ROWS, synced_rows: ROWS });
    const status = must(await w.api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200);
    expect(status).toMatchObject({ vector_table_id: table.id, sync_status: "synced", rows_pending: 0, last_error: null, last_error_at: null });
  });

  test("queries are exact: ids, order, scores, metadata, text; every operator, $or, shorthand, min score, limit", async () => {
    const rows = await w.readRows();
    for (const p of PROBES) expect(await probe(w.api, table.id, p, OLD_CONFIG, rows)).toBeNull();
  });

  test("ties are broken by primary key numerically", async () => {
    const answer = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "Title: identical twin text\nsame words exactly here", limit: 4 }), 200);
    expect(answer.results.map((r: { id: string }) => r.id)).toEqual(TIED.map(String));
    expect(new Set(answer.results.map((r: { similarity_score: number }) => r.similarity_score)).size).toBe(1);
    expect(answer.results[0].similarity_score).toBeCloseTo(1, 3);
  });

  test("source insert, text update, metadata-only update, delete and emptied text are reflected by a sync pass", async () => {
    const touched = await sourceEdits(w);
    await exactNow(table.id, [touched, ...PROBES]);
    const answer = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, touched.body), 200);
    expect(answer.results.map((r: { id: string }) => r.id).sort()).toEqual(["1000", "5", "6", "9"]);
    expect(answer.results.find((r: { id: string }) => r.id === "6").metadata).toEqual({ category: "changed", price: 99.5, stock: 19, active: false, code: "r6" });
    const got = must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200);
    expect(got.total_rows).toBe(ROWS); // one inserted, one deleted
    const status = must(await w.api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200);
    expect(status.last_sync_at).toEqual(expect.any(String));
    expect(status.rows_pending).toBe(0);
  });

  test("paused: queries still answer from the stored vectors and changes wait; resumed: caught up", async () => {
    await exactNow(witness.id, [codesProbe(["r1000", "r5", "r7"])]);
    const before = await w.readRows();
    const paused = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`), 200);
    expect(paused).toMatchObject({ vector_table_id: table.id, sync_status: "paused" });
    expect((await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`)).status).toBe(409);

    await w.pg.sql`INSERT INTO docs VALUES (1001, 'paused period insert', 'while paused', 'food', 1, 1, true, 'r1001')`;
    await w.pg.sql`UPDATE docs SET title = 'changed while paused' WHERE id = 11`;
    const watch = codesProbe(["r1001", "r11", "r12"], "paused period insert changed");
    // Two witness passes after the change: the paused table had the same chances to sync.
    await exactNow(witness.id, [watch]);
    const lastSync = must(await w.api.call("GET", `/v1/vector-tables/${witness.id}/sync/status`), 200).last_sync_at;
    await eventually(async () => must(await w.api.call("GET", `/v1/vector-tables/${witness.id}/sync/status`), 200).last_sync_at > lastSync, 5_000);
    for (const p of [watch, ...PROBES.slice(0, 6)]) expect(await probe(w.api, table.id, p, OLD_CONFIG, before)).toBeNull();
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200).sync_status).toBe("paused");

    const resumed = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`), 200);
    expect(resumed).toMatchObject({ vector_table_id: table.id, sync_status: "synced" });
    expect((await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`)).status).toBe(409);
    await exactNow(table.id, [watch, ...PROBES]);
  });

  test("PUT columns and dimensions: rebackfill while queries answer from one whole configuration, then the new one", async () => {
    const rows = await w.readRows(); // the source holds still during the rebackfill
    const loopProbes = [PROBES[0]!, PROBES[5]!, PROBES[17]!];
    const put = must(await w.api.call("PUT", `/v1/vector-tables/${table.id}`, { columns: NEW_COLUMNS, embedding_dimensions: 96 }), 200);
    expect(put).toMatchObject({ sync_status: "pending_rebackfill", embedding_dimensions: 96 });

    const { answered, fromOld, fromNew, failures } = await queriesDuringRebackfill(w, table.id, rows, loopProbes);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(0);
    console.log(`rebackfill: ${answered} queries during it, ${fromOld} from the old configuration, ${fromNew} from the new`);
    // After the swap: only the new configuration, everywhere.
    for (const p of PROBES) expect(await probe(w.api, table.id, p, NEW_CONFIG, rows)).toBeNull();
    const got = must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200);
    expect(got).toMatchObject({ total_rows: rows.length, synced_rows: rows.length, embedding_dimensions: 96 });
    // And the sync goes on under the new configuration.
    await w.pg.sql`UPDATE docs SET body = 'after the swap' WHERE id = 12`;
    await exactNow(table.id, [codesProbe(["r12", "r13"], "after the swap")], NEW_CONFIG);
  }, 40_000);

  test("DELETE: 204, then 404 everywhere, and the collection is gone from the store", async () => {
    const collection = table.vectorstore_collection;
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    for (const [method, path] of [["GET", ""], ["GET", "/sync/status"], ["POST", "/query"], ["DELETE", ""]] as const) {
      const answer = await w.api.call(method, `/v1/vector-tables/${table.id}${path}`, method === "POST" ? { query: "x" } : undefined);
      expect([path, answer.status, answer.body.error.code]).toEqual([path, 404, "not_found"]);
    }
    const list = must(await w.api.call("GET", "/v1/vector-tables"), 200);
    expect(list.data.map((t: { id: string }) => t.id)).toEqual([witness.id]);
    // The store is the process's own: look once it has stopped.
    await w.proc.stop("SIGTERM");
    const config = resolveConfig({ "data-dir": w.proc.dataDir }, { VECSYNC_LOG_LEVEL: "silent" });
    const database = await openDatabase(config.databaseUrl);
    const vectors = await openVectorStore(config, database, createLogger("silent"));
    try {
      expect(vectors.hasCollection(collection)).toBe(false);
      expect(vectors.listCollections()).toEqual([witness.vectorstore_collection]);
    } finally {
      await vectors.close();
      database.close();
    }
  });
});
