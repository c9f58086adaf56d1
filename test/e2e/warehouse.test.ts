// The main job end to end against the warehouse test server (test/fakes/warehouse), which the
// service reaches through snowflake-sdk: create → backfill → synced → queries exact against a
// brute-force expectation → a change picked up by batch sync → delete. The test keeps the source
// rows itself (the fake's admin API runs scripts and returns nothing) and mirrors every change.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import type { RunningProcess } from "../harness.ts";
import { startFakeWarehouse, type FakeWarehouse } from "../fakes/warehouse/server.ts";
import { eventuallyExact, eventuallyStatus, must, probe, signUp, startService, type Api, type Config, type Probe, type Row } from "./helpers.ts";
import { seedRows } from "./source.ts";
import { insertSql, upper, WH_COLUMNS, WH_PROBES } from "./warehouse-world.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const COLUMNS = WH_COLUMNS;
const CONFIG: Config = { columns: COLUMNS, dimensions: 64, pk: "ID" };
const COUNT = 120;

const PROBES = WH_PROBES;

let fake: FakeWarehouse;
let proc: RunningProcess;
let api: Api;
let table: any;
const rows: Row[] = seedRows(COUNT).map(upper);
const readRows = async () => rows;

beforeAll(async () => {
  fake = await startFakeWarehouse();
  await fake.exec("CREATE TABLE ITEMS (ID NUMBER(38,0) PRIMARY KEY, TITLE VARCHAR, BODY VARCHAR, CATEGORY VARCHAR, PRICE FLOAT, STOCK INTEGER, ACTIVE BOOLEAN, CODE VARCHAR)");
  await fake.exec(insertSql(rows));
  proc = await startService({ VECSYNC_WAREHOUSE_URL: fake.url });
  ({ api } = await signUp(proc));
}, 30_000);
afterAll(async () => {
  await proc?.[Symbol.asyncDispose]();
  await fake?.close();
});

describe("happy", () => {
  test("connection through snowflake-sdk, provider, vector table, backfill to synced", async () => {
    const credentials = { auth_method: "password", account: fake.account, user: "tester", password: "secret", database: fake.database };
    const connection = must(await api.call("POST", "/v1/providers/db_warehouse/connections", { name: "warehouse", mode: "managed", credentials }), 201);
    expect(must(await api.call("POST", `/v1/connections/${connection.id}/test`), 200).status).toBe("connected");
    const provider = must(await api.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" }), 201);
    table = must(await api.call("POST", "/v1/vector-tables", {
      name: "items", connection_id: connection.id, embedding_provider_id: provider.id, source_table: "ITEMS", primary_key_column: "ID",
      columns: COLUMNS, embedding_model: "local-lexical-v1", embedding_dimensions: 64,
    }), 201);
    expect(table).toMatchObject({ sync_status: "pending", sync_mode: "batch", vectorstore_collection: `vt_${table.id.slice(0, 8)}_items` });
    const columns = must(await api.call("GET", `/v1/vector-tables/${table.id}/schema`), 200).columns;
    expect(columns[0]).toEqual({ name: "ID", type: "NUMBER", nullable: false });
    expect(must(await api.call("POST", `/v1/vector-tables/${table.id}/backfill`), 200).status).toBe("backfilling");
    const synced = await eventuallyStatus(api, table.id, "synced", 20_000);
    expect(synced).toMatchObject({ total_rows: COUNT, synced_rows: COUNT });
  }, 30_000);

  test("queries are exact against the brute-force expectation", async () => {
    for (const p of PROBES) expect(await probe(api, table.id, p, CONFIG, rows)).toBeNull();
  });

  test("insert, text update, metadata-only update and delete are picked up by batch sync", async () => {
    await fake.exec(`${insertSql([{ ID: 500, TITLE: "zebra quasar lantern", BODY: "a new row", CATEGORY: "travel", PRICE: 12.5, STOCK: 7, ACTIVE: true, CODE: "r500" }])};
      UPDATE ITEMS SET TITLE = 'walrus nebula' WHERE ID = 5;
      UPDATE ITEMS SET CATEGORY = 'changed', PRICE = 99.5 WHERE ID = 6;
      DELETE FROM ITEMS WHERE ID = 7`);
    rows.push({ ID: 500, TITLE: "zebra quasar lantern", BODY: "a new row", CATEGORY: "travel", PRICE: 12.5, STOCK: 7, ACTIVE: true, CODE: "r500" });
    Object.assign(rows[4]!, { TITLE: "walrus nebula" });
    Object.assign(rows[5]!, { CATEGORY: "changed", PRICE: 99.5 });
    rows.splice(6, 1);
    const touched: Probe = { body: { query: "zebra quasar walrus nebula", limit: 100, filters: { CODE: { in: ["r500", "r5", "r6", "r7"] } } }, where: (r) => ["r500", "r5", "r6", "r7"].includes(r.CODE as string) };
    await eventuallyExact(api, table.id, [touched, ...PROBES], CONFIG, readRows, 15_000);
    const status = must(await api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200);
    expect(status).toMatchObject({ sync_status: "synced", rows_pending: 0, last_error: null });
    expect(status.last_sync_at).toEqual(expect.any(String));
    expect(must(await api.call("GET", `/v1/vector-tables/${table.id}`), 200).total_rows).toBe(COUNT);
  }, 20_000);

  test("DELETE: 204, then 404", async () => {
    expect((await api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    expect((await api.call("GET", `/v1/vector-tables/${table.id}`)).status).toBe(404);
    expect((await api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "x" })).status).toBe(404);
    expect(must(await api.call("GET", "/v1/vector-tables"), 200).data).toEqual([]);
  });
});
