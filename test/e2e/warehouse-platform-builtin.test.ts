// Platform mode on the warehouse with a built-in model, end to end over HTTP against the real
// process: no embedding provider; the warehouse embeds the rows in SQL (EMBED_TEXT_768) from the
// source table, so the text never leaves it, and embeds each query the same way. The table
// appears at <DB>.VECSYNC.VT_<ID8>_<NAME> keyed as the source; queries are exact against a brute
// force the test computes with the fake's EMBED_TEXT_768 over texts it renders itself; batch
// sync and change tracking reflect edits; a PUT model swap (arctic → e5) re-backfills into a new
// table swapped in while queries answer; DELETE drops the table. An embedding provider of the
// organization (a fake server counting requests) is never called.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings/server.ts";
import { eventually } from "../harness.ts";
import { embeddedText, eventuallyStatus, mismatch, must, type Probe } from "./helpers.ts";
import { builtInExpected, codesProbe, insertSql, openWarehouseWorld, WH_COLUMNS, WH_PROBES, type WarehouseWorld } from "./warehouse-world.ts";

setDefaultTimeout(30_000);

const ARCTIC = "snowflake-arctic-embed-m";
const E5 = "e5-base-v2";
let w: WarehouseWorld;
let provider: FakeEmbeddings;
let table: any;
let streamed: any;

const body = (name: string, extra: Record<string, unknown> = {}) => ({
  name, connection_id: w.connection.id, source_table: "ITEMS", primary_key_column: "ID", columns: WH_COLUMNS, embedding_model: ARCTIC, embedding_dimensions: 768, ...extra,
});

async function check(id: string, p: Probe, model: string, rows = w.rows): Promise<string | null> {
  const answer = await w.api.call("POST", `/v1/vector-tables/${id}/query`, p.body);
  const problem = mismatch(answer, await builtInExpected(w.fake, model, rows, p.body, p.where));
  if (problem === null && answer.body.model !== model) return `model ${answer.body.model} ≠ ${model}`;
  return problem && `${JSON.stringify(p.body)}: ${problem}`;
}

async function exactNow(id: string, probes: Probe[], model = ARCTIC, timeoutMs = 15_000): Promise<void> {
  await eventually(async () => {
    for (const p of probes) if ((await check(id, p, model)) !== null) return false;
    return true;
  }, timeoutMs, 100).catch(async () => {
    for (const p of probes) expect(await check(id, p, model)).toBeNull();
  });
}

const ref = () => table.platform_vector_ref as string;
const stored = async () =>
  new Map((await w.fake.engine.query(`SELECT ID, EMBEDDED_TEXT, CATEGORY, PRICE FROM ${ref()} ORDER BY ID`)).rows.map((r) => [Number(r[0]), { text: String(r[1]), category: r[2], price: r[3] === null ? null : Number(r[3]) }]));

beforeAll(async () => {
  // The reconciling pass of cdc tables held back: what the stream table shows is the stream's doing.
  w = await openWarehouseWorld({ mode: "platform", env: { VECSYNC_RECONCILE_INTERVAL: "3600" } });
  provider = await startFakeEmbeddings("emb_a", { apiKey: "k-test" });
  // Not used by the tables: there only to prove no text reaches a provider.
  must(await w.api.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" }), 201);
  table = must(await w.api.call("POST", "/v1/vector-tables", body("docs")), 201);
  streamed = must(await w.api.call("POST", "/v1/vector-tables", body("stream", { sync_mode: "cdc" })), 201);
  for (const t of [table, streamed]) expect(must(await w.api.call("POST", `/v1/vector-tables/${t.id}/backfill`), 200).status).toBe("backfilling");
  await eventuallyStatus(w.api, table.id, "synced", 20_000);
  await eventuallyStatus(w.api, streamed.id, "synced", 20_000);
}, 60_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
  await provider?.stop();
});

describe("built-in model", () => {
  test("no provider; the table is <DB>.VECSYNC.VT_<ID8>_<NAME>, keyed NUMBER(38,0) as the source, one row per source row with text", async () => {
    expect(table).toMatchObject({ mode: "platform", embedding_provider_id: null, platform_vector_ref: `${w.fake.database}.VECSYNC.VT_${table.id.slice(0, 8).toUpperCase()}_DOCS` });
    const withText = w.rows.filter((r) => embeddedText(WH_COLUMNS, r) !== null);
    expect(withText.length).toBeLessThan(w.rows.length);
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200)).toMatchObject({ sync_status: "synced", total_rows: w.rows.length, synced_rows: w.rows.length });
    const rows = await stored();
    expect([...rows.keys()]).toEqual(withText.map((r) => Number(r.ID)));
    for (const r of withText) expect(rows.get(Number(r.ID))!.text).toBe(embeddedText(WH_COLUMNS, r)!);
    const name = ref().split(".")[2]!;
    const key = (await w.fake.engine.query(`SELECT DATA_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'VECSYNC' AND TABLE_NAME = '${name}' AND COLUMN_NAME = 'ID'`)).rows;
    expect(key.map((r) => r.map(String))).toEqual([["NUMBER", "38", "0"]]);
    // Users JOIN it with their own table by the source's key.
    const joined = await w.fake.engine.query(`SELECT I.CODE, V.EMBEDDED_TEXT FROM ITEMS I JOIN ${ref()} V ON V.ID = I.ID WHERE I.ID = 2`);
    expect(joined.rows.map((r) => r.map(String))).toEqual([["r2", embeddedText(WH_COLUMNS, w.rows[1]!)!]]);
  });

  test("queries are exact against the fake's EMBED_TEXT_768 brute force: every filter type, $or, min score, ties", async () => {
    for (const p of WH_PROBES) expect(await check(table.id, p, ARCTIC)).toBeNull();
  });

  test("insert, text update, metadata-only update, delete and emptied text are reflected by a batch pass", async () => {
    await w.edit(
      `${insertSql([{ ID: 500, TITLE: "zebra quasar lantern", BODY: "a new row", CATEGORY: "travel", PRICE: 12.5, STOCK: 7, ACTIVE: true, CODE: "r500" }])};
       UPDATE ITEMS SET TITLE = 'walrus nebula' WHERE ID = 5;
       UPDATE ITEMS SET CATEGORY = 'changed', PRICE = 99.5 WHERE ID = 6;
       DELETE FROM ITEMS WHERE ID = 7;
       UPDATE ITEMS SET TITLE = NULL, BODY = NULL WHERE ID = 8`,
      (rows) => {
        rows.push({ ID: 500, TITLE: "zebra quasar lantern", BODY: "a new row", CATEGORY: "travel", PRICE: 12.5, STOCK: 7, ACTIVE: true, CODE: "r500" });
        Object.assign(rows[4]!, { TITLE: "walrus nebula" });
        Object.assign(rows[5]!, { CATEGORY: "changed", PRICE: 99.5 });
        Object.assign(rows[7]!, { TITLE: null, BODY: null });
        rows.splice(6, 1);
      },
    );
    await exactNow(table.id, [codesProbe(["r500", "r5", "r6", "r7", "r8"], "zebra quasar walrus nebula"), ...WH_PROBES]);
    const rows = await stored();
    expect(rows.get(500)!.text).toBe("Title: zebra quasar lantern\na new row");
    expect(rows.get(6)).toMatchObject({ category: "changed", price: 99.5 });
    expect(rows.has(7)).toBe(false);
    expect(rows.has(8)).toBe(false);
  });

  test("change tracking: edits reach a cdc table through the stream", async () => {
    await exactNow(streamed.id, [codesProbe(["r500", "r5", "r6", "r7", "r8"], "zebra quasar walrus nebula"), WH_PROBES[3]!]);
    await w.edit("UPDATE ITEMS SET BODY = 'streamed change arrives' WHERE ID = 9", (rows) => Object.assign(rows.find((r) => r.ID === 9)!, { BODY: "streamed change arrives" }));
    await exactNow(streamed.id, [codesProbe(["r9", "r10"], "streamed change arrives")]);
  });

  test("PUT arctic → e5: a new table filled by the warehouse and swapped in; queries answer throughout from one model or the other", async () => {
    const rows = w.rows.map((r) => ({ ...r }));
    const loop = [WH_PROBES[0]!, WH_PROBES[3]!];
    must(await w.api.call("PUT", `/v1/vector-tables/${table.id}`, { embedding_model: E5 }), 200);
    const seen = { old: 0, neu: 0, failures: [] as string[], building: new Set<string>() };
    let done = false;
    const querying = (async () => {
      while (!done) {
        for (const name of await w.vecsyncTables()) seen.building.add(name);
        for (const p of loop) {
          const answer = await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, p.body);
          const old = mismatch(answer, await builtInExpected(w.fake, ARCTIC, rows, p.body, p.where));
          const neu = mismatch(answer, await builtInExpected(w.fake, E5, rows, p.body, p.where));
          if (old === null && answer.body.model === ARCTIC) seen.old++;
          else if (neu === null && answer.body.model === E5) seen.neu++;
          else seen.failures.push(`${JSON.stringify(p.body)}: ${old}; ${neu}`);
        }
      }
    })();
    try {
      await eventually(async () => must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200).embedding_model === E5, 5_000);
      await eventuallyStatus(w.api, table.id, "synced", 30_000);
    } finally {
      done = true;
      await querying;
    }
    expect(seen.failures).toEqual([]);
    expect(seen.old + seen.neu).toBeGreaterThan(0);
    expect([...seen.building].some((n) => n.startsWith(`VT_${table.id.slice(0, 8).toUpperCase()}_DOCS__G`))).toBe(true);
    for (const p of WH_PROBES) expect(await check(table.id, p, E5)).toBeNull();
    expect((await w.vecsyncTables()).filter((n) => n.startsWith(`VT_${table.id.slice(0, 8).toUpperCase()}`))).toEqual([ref().split(".")[2]!]);
  }, 60_000);

  test("no text reached an embedding provider", () => {
    expect(provider.counters.received).toBe(0);
  });

  test("DELETE: 204, 404 after, and the platform table is dropped from the warehouse", async () => {
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    expect((await w.api.call("GET", `/v1/vector-tables/${table.id}`)).status).toBe(404);
    expect(await w.vecsyncTables()).toEqual([streamed.platform_vector_ref.split(".")[2]]);
  });
});
