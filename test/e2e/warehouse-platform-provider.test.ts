// Platform mode on the warehouse with an embedding provider, end to end over HTTP against the
// real process: the service embeds (the `local` model) and writes the vectors into
// <DB>.VECSYNC.VT_<ID8>_<NAME> in the customer's warehouse. Backfill, exact queries (query modes
// keyword and hybrid refused: the warehouse has no BM25), batch edits,
// pause and resume, a PUT re-backfill into a new table swapped in (SWAP WITH) while queries
// answer, DELETE dropping the table, and the organization's deletion dropping the rest.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { eventually } from "../harness.ts";
import { bruteForce, embeddedText, eventuallyExact, eventuallyStatus, mismatch, must, probe, type Config, type Row } from "./helpers.ts";
import { codesProbe, insertSql, openWarehouseWorld, WH_COLUMNS, WH_PROBES, type WarehouseWorld } from "./warehouse-world.ts";

setDefaultTimeout(30_000);

const OLD: Config = { columns: WH_COLUMNS, dimensions: 64, pk: "ID" };
const NEW: Config = { columns: WH_COLUMNS, dimensions: 96, pk: "ID" };
let w: WarehouseWorld;
let table: any;
let witness: any;

const exactNow = (id: string, probes = WH_PROBES, config = OLD) => eventuallyExact(w.api, id, probes, config, w.readRows, 15_000);
const ref = () => table.platform_vector_ref as string;
const prefix = (t: any) => `VT_${t.id.slice(0, 8).toUpperCase()}`;

beforeAll(async () => {
  w = await openWarehouseWorld({ mode: "platform" });
  const provider = must(await w.api.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" }), 201);
  const body = (name: string) => ({ name, connection_id: w.connection.id, embedding_provider_id: provider.id, source_table: "ITEMS", primary_key_column: "ID", columns: WH_COLUMNS, embedding_model: "local-lexical-v1", embedding_dimensions: 64 });
  table = must(await w.api.call("POST", "/v1/vector-tables", body("docs")), 201);
  witness = must(await w.api.call("POST", "/v1/vector-tables", body("witness")), 201);
  for (const t of [table, witness]) must(await w.api.call("POST", `/v1/vector-tables/${t.id}/backfill`), 200);
  await eventuallyStatus(w.api, table.id, "synced", 20_000);
  await eventuallyStatus(w.api, witness.id, "synced", 20_000);
}, 60_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

describe("with a provider", () => {
  test("backfilled into <DB>.VECSYNC.VT_<ID8>_DOCS: VECTOR(FLOAT, 64), keyed as the source, one row per source row with text", async () => {
    expect(ref()).toBe(`${w.fake.database}.VECSYNC.${prefix(table)}_DOCS`);
    const columns = (await w.fake.engine.query(`SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'VECSYNC' AND TABLE_NAME = '${ref().split(".")[2]}' ORDER BY ORDINAL_POSITION`)).rows.map((r) => r.map(String));
    expect(columns[0]).toEqual(["ID", "NUMBER"]);
    expect(columns.find((c) => c[0] === "EMBEDDING")).toEqual(["EMBEDDING", "VECTOR"]);
    const ids = (await w.fake.engine.query(`SELECT ID FROM ${ref()} ORDER BY ID`)).rows.map((r) => Number(r[0]));
    expect(ids).toEqual(w.rows.filter((r) => embeddedText(WH_COLUMNS, r) !== null).map((r) => Number(r.ID)));
  });

  test("queries are exact against brute force", async () => {
    for (const p of WH_PROBES) expect(await probe(w.api, table.id, p, OLD, w.rows)).toBeNull();
  });

  test("query modes: keyword and hybrid → 400 naming mode as unsupported on the warehouse; vector answers null keyword scores", async () => {
    for (const mode of ["keyword", "hybrid"]) {
      const res = await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "lantern", mode });
      expect([res.status, res.body.error.code, res.body.error.details.map((d: { path: string }) => d.path)]).toEqual([400, "validation_error", ["mode"]]);
      expect(res.body.error.details[0].message).toContain("not supported by warehouse");
    }
    const got = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "lantern", mode: "vector", limit: 3 }), 200);
    expect(got.results.length).toBe(3);
    for (const r of got.results) expect([r.keyword_score, r.rank_score]).toEqual([null, r.similarity_score]);
  });

  test("insert, text update, metadata-only update, delete are reflected by a batch pass", async () => {
    const added: Row = { ID: 600, TITLE: "zebra quasar lantern", BODY: "a new row", CATEGORY: "travel", PRICE: 12.5, STOCK: 7, ACTIVE: true, CODE: "r600" };
    await w.edit(`${insertSql([added])}; UPDATE ITEMS SET TITLE = 'walrus nebula' WHERE ID = 5; UPDATE ITEMS SET CATEGORY = 'changed' WHERE ID = 6; DELETE FROM ITEMS WHERE ID = 7`, (rows) => {
      rows.push(added);
      Object.assign(rows[4]!, { TITLE: "walrus nebula" });
      Object.assign(rows[5]!, { CATEGORY: "changed" });
      rows.splice(6, 1);
    });
    await exactNow(table.id, [codesProbe(["r600", "r5", "r6", "r7"], "zebra quasar walrus nebula"), ...WH_PROBES]);
  });

  test("paused: changes wait while queries answer; resumed: caught up", async () => {
    const before = w.rows.map((r) => ({ ...r }));
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`), 200);
    await w.edit("UPDATE ITEMS SET BODY = 'paused period change' WHERE ID = 11", (rows) => Object.assign(rows.find((r) => r.ID === 11)!, { BODY: "paused period change" }));
    const watch = codesProbe(["r11", "r12"], "paused period change");
    await exactNow(witness.id, [watch]);
    expect(await probe(w.api, table.id, watch, OLD, before)).toBeNull();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`), 200);
    await exactNow(table.id, [watch]);
  });

  test("PUT dimensions 64 → 96: a new table swapped in; queries answer throughout from one configuration or the other", async () => {
    const rows = w.rows.map((r) => ({ ...r }));
    must(await w.api.call("PUT", `/v1/vector-tables/${table.id}`, { embedding_dimensions: 96 }), 200);
    const seen = { answered: 0, failures: [] as string[], building: new Set<string>() };
    let done = false;
    const querying = (async () => {
      while (!done) {
        for (const name of await w.vecsyncTables()) seen.building.add(name);
        const p = WH_PROBES[3]!;
        const answer = await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, p.body);
        seen.answered++;
        const old = mismatch(answer, bruteForce(OLD, rows, p.body, p.where));
        const neu = mismatch(answer, bruteForce(NEW, rows, p.body, p.where));
        if (old !== null && neu !== null) seen.failures.push(`${old}; ${neu}`);
      }
    })();
    try {
      await eventually(async () => must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200).embedding_dimensions === 96, 5_000);
      await eventuallyStatus(w.api, table.id, "synced", 30_000);
    } finally {
      done = true;
      await querying;
    }
    expect(seen.failures).toEqual([]);
    expect(seen.answered).toBeGreaterThan(0);
    expect([...seen.building].some((n) => n.startsWith(`${prefix(table)}_DOCS__G`))).toBe(true);
    for (const p of WH_PROBES) expect(await probe(w.api, table.id, p, NEW, rows)).toBeNull();
    expect((await w.vecsyncTables()).filter((n) => n.startsWith(prefix(table)))).toEqual([ref().split(".")[2]!]);
  }, 60_000);

  test("DELETE drops the table; deleting the organization drops the rest", async () => {
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    expect(await w.vecsyncTables()).toEqual([witness.platform_vector_ref.split(".")[2]]);
    expect((await w.jwt.call("DELETE", `/v1/organizations/${w.orgId}`)).status).toBe(202);
    await eventually(async () => (await w.vecsyncTables()).length === 0, 15_000);
  });
});
