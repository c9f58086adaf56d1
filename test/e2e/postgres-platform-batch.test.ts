// Platform mode end to end, batch sync: the real process keeps the vectors in the source Postgres
// itself (pgvector, CONTRACT 12). A real table appears in schema vecsync with one row per source
// row with text, users can JOIN it with their own table; queries are exact against brute force,
// computed both in the test and in SQL on that table; source edits are reflected; a PUT re-backfills
// into a new table swapped in while queries answer throughout; DELETE drops the table.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lexicalVector } from "../../src/drivers/embeddings/local.ts";
import { eventually } from "../harness.ts";
import { embeddedText, eventuallyExact, eventuallyStatus, must, probe, type Row } from "./helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "./postgres-world.ts";
import { queriesDuringRebackfill, sourceEdits } from "./scenarios.ts";
import { codesProbe, NEW_COLUMNS, NEW_CONFIG, OLD_CONFIG, PROBES, ROWS, TIED } from "./source.ts";

let w: PgWorld;
let table: any;
let witness: any;

beforeAll(async () => {
  w = await openPgWorld({}, { mode: "platform" });
  table = await createAndBackfill(w, tableBody(w));
  witness = await createAndBackfill(w, tableBody(w, { name: "witness" }));
  await eventuallyStatus(w.api, table.id, "synced", 20_000);
  await eventuallyStatus(w.api, witness.id, "synced", 20_000);
}, 40_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

const exactNow = (id: string, probes = PROBES, config = OLD_CONFIG, timeoutMs = 10_000) => eventuallyExact(w.api, id, probes, config, w.readRows, timeoutMs);
const ref = () => table.platform_vector_ref as string;
const vectorsTable = () => w.pg.sql.unsafe(`SELECT id, embedded_text, category, price, stock, active, code FROM ${ref()} ORDER BY id`) as Promise<Row[]>;
const vecsyncTables = async () => (await w.pg.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'vecsync' ORDER BY tablename`).map((r) => r.tablename as string);

/** The top `limit` ids by cosine, scored by pgvector itself on the platform table, ties by id. */
async function sqlBruteForce(query: string, dimensions: number, limit: number): Promise<string[]> {
  const q = `[${Array.from(lexicalVector(query, dimensions)).join(",")}]`;
  const rows = await w.pg.sql.unsafe(`SELECT id FROM ${ref()} ORDER BY embedding <=> $1::text::vector(${dimensions}), id LIMIT ${limit}`, [q]);
  return rows.map((r) => String(r.id));
}

describe("happy", () => {
  test("created with its platform ref; backfilled to synced; a real pgvector table with one row per source row with text, keyed as the source", async () => {
    expect(table).toMatchObject({ mode: "platform", sync_status: "pending", platform_vector_ref: `vecsync.vt_${table.id.slice(0, 8)}_docs` });
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200)).toMatchObject({ sync_status: "synced", total_rows: ROWS, synced_rows: ROWS });
    const source = await w.readRows();
    const withText = source.filter((r) => embeddedText(OLD_CONFIG.columns, r) !== null);
    const stored = await vectorsTable();
    expect(stored.map((r) => r.id)).toEqual(withText.map((r) => r.id));
    expect(stored.find((r) => r.id === 1)).toMatchObject({ embedded_text: embeddedText(OLD_CONFIG.columns, source[0]!), code: "r1" });
    const types = await w.pg.sql`SELECT column_name, format_type(atttypid, atttypmod) AS type FROM information_schema.columns c JOIN pg_attribute a ON a.attrelid = ${ref()}::regclass AND a.attname = c.column_name WHERE table_schema = 'vecsync' AND table_name = ${ref().split(".")[1]!} ORDER BY ordinal_position`;
    expect(types.map((t) => [t.column_name, t.type])).toEqual([
      ["id", "integer"], ["embedded_text", "text"], ["category", "text"], ["price", "double precision"], ["stock", "bigint"], ["active", "boolean"], ["code", "text"],
      ["embedding", "vector(64)"], ["vecsync_text_hash", "text"], ["vecsync_meta_hash", "text"], ["vecsync_terms", "jsonb"], ["vecsync_length", "integer"],
    ]);
    const indexes = (await w.pg.sql`SELECT indexdef FROM pg_indexes WHERE schemaname = 'vecsync' AND tablename = ${ref().split(".")[1]!}`).map((i) => String(i.indexdef));
    expect(indexes.some((d) => d.includes("USING hnsw (embedding vector_cosine_ops)"))).toBe(true);
    expect(indexes.filter((d) => d.includes("USING btree")).length).toBe(1 + 5); // the key and each metadata column
    // Users JOIN it with their own table by the source's key.
    const joined = await w.pg.sql.unsafe(`SELECT d.title, v.embedded_text FROM docs d JOIN ${ref()} v USING (id) WHERE d.id = 2`);
    expect(joined[0]!.embedded_text).toBe(`Title: ${joined[0]!.title}\n${source[1]!.body}`);
  });

  test("its passes are in the sync history as a managed table's are: the backfill, the periodic passes, and one asked for by hand", async () => {
    const withText = (await w.readRows()).filter((r) => embeddedText(OLD_CONFIG.columns, r) !== null).length;
    const history = async () => must(await w.api.call("GET", `/v1/vector-tables/${table.id}/sync/history?limit=100`), 200).data as any[];
    const first = (await history()).at(-1);
    expect(first).toMatchObject({ kind: "backfill", status: "completed", rows_scanned: ROWS, rows_embedded: withText, error: null });
    expect(first.tokens).toBeGreaterThan(0);
    // The periodic pass runs every second here: asked for by hand, a pass may find one running.
    const started = await eventually(async () => {
      const res = await w.api.call("POST", `/v1/vector-tables/${table.id}/sync`);
      if (res.status === 409) expect(res.body.error.code).toBe("sync_running");
      return res.status === 202 && res.body;
    }, 10_000);
    const pass = await eventually(async () => (await history()).find((e) => e.id === started.pass_id && e.status !== "running"), 10_000);
    expect(pass).toMatchObject({ kind: "batch", status: "completed", rows_scanned: ROWS, rows_embedded: 0, rows_unchanged: ROWS, tokens: 0 });
  });

  test("queries are exact: against brute force in the test and in SQL on the platform table; every operator, $or, min score, limit", async () => {
    const rows = await w.readRows();
    for (const p of PROBES) expect(await probe(w.api, table.id, p, OLD_CONFIG, rows)).toBeNull();
    for (const query of ["vector search engine with postgres replication", "cooking pasta with cheese and bread", "mountain river boat"]) {
      const answer = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query, limit: 20 }), 200);
      expect(answer.results.map((r: { id: string }) => r.id)).toEqual(await sqlBruteForce(query, 64, 20));
    }
  });

  test("ties are broken by primary key numerically", async () => {
    const answer = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "Title: identical twin text\nsame words exactly here", limit: 4 }), 200);
    expect(answer.results.map((r: { id: string }) => r.id)).toEqual(TIED.map(String));
  });

  test("source insert, text update, metadata-only update, delete and emptied text are reflected by a sync pass, in the platform table too", async () => {
    const touched = await sourceEdits(w);
    await exactNow(table.id, [touched, ...PROBES]);
    const stored = new Map((await vectorsTable()).map((r) => [r.id, r]));
    expect(stored.get(1000)).toMatchObject({ embedded_text: "Title: zebra quasar lantern\na brand new row" });
    expect(stored.get(6)).toMatchObject({ category: "changed", price: 99.5, stock: "19", active: false }); // bigint reads back as text
    expect(stored.has(7)).toBe(false);
    expect(stored.has(8)).toBe(false);
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200).total_rows).toBe(ROWS);
  });

  test("paused: queries still answer from the stored vectors and changes wait; resumed: caught up", async () => {
    await exactNow(witness.id, [codesProbe(["r1000", "r5", "r7"])]);
    const before = await w.readRows();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/pause`), 200);
    await w.pg.sql`INSERT INTO docs VALUES (1001, 'paused period insert', 'while paused', 'food', 1, 1, true, 'r1001')`;
    const watch = codesProbe(["r1001", "r11"], "paused period insert changed");
    await exactNow(witness.id, [watch]);
    const lastSync = must(await w.api.call("GET", `/v1/vector-tables/${witness.id}/sync/status`), 200).last_sync_at;
    await eventually(async () => must(await w.api.call("GET", `/v1/vector-tables/${witness.id}/sync/status`), 200).last_sync_at > lastSync, 5_000);
    expect(await probe(w.api, table.id, watch, OLD_CONFIG, before)).toBeNull();
    must(await w.api.call("POST", `/v1/vector-tables/${table.id}/sync/resume`), 200);
    await exactNow(table.id, [watch, ...PROBES]);
  });

  test("PUT columns and dimensions: re-backfill into a new table swapped in by renames; queries answer throughout", async () => {
    const rows = await w.readRows();
    const loopProbes = [PROBES[0]!, PROBES[5]!, PROBES[17]!];
    must(await w.api.call("PUT", `/v1/vector-tables/${table.id}`, { columns: NEW_COLUMNS, embedding_dimensions: 96 }), 200);
    const building = new Set<string>();
    const { answered, fromOld, fromNew, failures } = await queriesDuringRebackfill(w, table.id, rows, loopProbes, async () => {
      for (const name of await vecsyncTables()) building.add(name);
    });
    expect(failures).toEqual([]);
    console.log(`platform rebackfill: ${answered} queries during it, ${fromOld} from the old configuration, ${fromNew} from the new`);
    expect([...building].some((name) => name.startsWith(`vt_${table.id.slice(0, 8)}$g`))).toBe(true);
    for (const p of PROBES) expect(await probe(w.api, table.id, p, NEW_CONFIG, rows)).toBeNull();
    const [column] = await w.pg.sql.unsafe(`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = '${ref()}'::regclass AND attname = 'embedding'`);
    expect(column!.type).toBe("vector(96)");
    // The live table and generation 2's keyword statistics; generation 1's went with its table.
    const family = `vt_${table.id.slice(0, 8)}`;
    expect((await vecsyncTables()).filter((t) => t.startsWith(family)).sort()).toEqual([`${family}$k2`, `${family}$n2`, ref().split(".")[1]!].sort());
    await w.pg.sql`UPDATE docs SET body = 'after the swap' WHERE id = 12`;
    await exactNow(table.id, [codesProbe(["r12", "r13"], "after the swap")], NEW_CONFIG);
  }, 45_000);

  test("DELETE: 204, 404 after, and the platform table is dropped from the source", async () => {
    expect((await w.api.call("DELETE", `/v1/vector-tables/${table.id}`)).status).toBe(204);
    expect((await w.api.call("GET", `/v1/vector-tables/${table.id}`)).status).toBe(404);
    const family = `vt_${witness.id.slice(0, 8)}`;
    expect((await vecsyncTables()).sort()).toEqual([`${family}$k1`, `${family}$n1`, witness.platform_vector_ref.split(".")[1]].sort());
  });
});
