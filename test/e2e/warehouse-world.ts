// The warehouse end-to-end world: the DuckDB-backed warehouse test server (test/fakes/warehouse)
// seeded with ITEMS, the real process pointed at it (VECSYNC_WAREHOUSE_URL), a signed-up
// organization, and a db_warehouse connection. The test keeps the source rows itself (the fake's
// admin API runs scripts and returns nothing) and mirrors every change through `edit`.
import type { RunningProcess } from "../harness.ts";
import { startFakeWarehouse, type FakeWarehouse } from "../fakes/warehouse/server.ts";
import { embeddedText, metadataOf, must, signUp, startService, type Api, type Column, type Expected, type Probe, type QueryBody, type Row } from "./helpers.ts";
import { COLUMNS, seedRows } from "./source.ts";

/** The seeded source's columns under the warehouse's upper-case names. */
export const WH_COLUMNS: Column[] = COLUMNS.map((c) => ({ ...c, name: c.name.toUpperCase() }));
const ITEM_COLUMNS = ["ID", "TITLE", "BODY", "CATEGORY", "PRICE", "STOCK", "ACTIVE", "CODE"];

export const sqlValue = (v: Row[string] | undefined) => (v === null || v === undefined ? "NULL" : typeof v === "string" ? `'${v.replaceAll("'", "''")}'` : String(v));
export const upper = (r: Row): Row => Object.fromEntries(Object.entries(r).map(([k, v]) => [k.toUpperCase(), v]));
export const insertSql = (rows: Row[]) => `INSERT INTO ITEMS VALUES ${rows.map((r) => `(${ITEM_COLUMNS.map((c) => sqlValue(r[c])).join(", ")})`).join(", ")}`;

const num = (v: Row[string] | undefined) => (v === null || v === undefined ? null : Number(v));
const Q = "vector search engine with postgres replication";
/** Queries over every filter type, $or, min score and limit, with the predicates they mean. */
export const WH_PROBES: Probe[] = [
  { body: { query: Q } },
  { body: { query: Q, limit: 100, min_similarity_score: 0.1 } },
  { body: { query: "Title: identical twin text\nsame words exactly here", limit: 4 } },
  { body: { query: Q, limit: 100, filters: { CATEGORY: "tech" } }, where: (r) => r.CATEGORY === "tech" },
  { body: { query: Q, limit: 100, filters: { CATEGORY: { nin: ["tech", "news"] } } }, where: (r) => r.CATEGORY !== "tech" && r.CATEGORY !== "news" },
  { body: { query: Q, limit: 100, filters: { PRICE: { gte: 20, lt: 70 }, ACTIVE: { neq: false } } }, where: (r) => num(r.PRICE) !== null && num(r.PRICE)! >= 20 && num(r.PRICE)! < 70 && r.ACTIVE !== false },
  { body: { query: Q, limit: 100, filters: { STOCK: [1, 2, 3], CATEGORY: { exists: true } } }, where: (r) => [1, 2, 3].includes(num(r.STOCK) as number) && r.CATEGORY !== null },
  { body: { query: Q, limit: 100, filters: { $or: [{ STOCK: { gt: 17 } }, { ACTIVE: true }] } }, where: (r) => (num(r.STOCK) !== null && num(r.STOCK)! > 17) || r.ACTIVE === true },
];
export const codesProbe = (codes: string[], query = Q): Probe => ({ body: { query, limit: 100, filters: { CODE: { in: codes } } }, where: (r) => codes.includes(r.CODE as string) });

export interface WarehouseWorld {
  fake: FakeWarehouse;
  proc: RunningProcess;
  api: Api;
  /** The owner's session, for organization-level calls. */
  jwt: Api;
  orgId: string;
  connection: any;
  /** The source rows as the test keeps them (upper-case column names). */
  rows: Row[];
  readRows(): Promise<Row[]>;
  /** Runs `sql` on the fake, then `mirror` on the test's copy of the rows. */
  edit(sql: string, mirror: (rows: Row[]) => void): Promise<void>;
  /** Tables in <DB>.VECSYNC. */
  vecsyncTables(): Promise<string[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function openWarehouseWorld(opts: { mode: "managed" | "platform"; count?: number; env?: Record<string, string> }): Promise<WarehouseWorld> {
  const fake = await startFakeWarehouse();
  const rows = seedRows(opts.count ?? 120).map(upper);
  await fake.exec("CREATE TABLE ITEMS (ID NUMBER(38,0) PRIMARY KEY, TITLE VARCHAR, BODY VARCHAR, CATEGORY VARCHAR, PRICE FLOAT, STOCK INTEGER, ACTIVE BOOLEAN, CODE VARCHAR)");
  await fake.exec(insertSql(rows));
  const proc = await startService({ VECSYNC_WAREHOUSE_URL: fake.url, ...opts.env });
  const { api, jwt, orgId } = await signUp(proc);
  const credentials = { auth_method: "password", account: fake.account, user: "tester", password: "secret", database: fake.database };
  const connection = must(await api.call("POST", "/v1/providers/db_warehouse/connections", { name: "warehouse", mode: opts.mode, credentials }), 201);
  return {
    fake,
    proc,
    api,
    jwt,
    orgId,
    connection,
    rows,
    readRows: async () => rows,
    async edit(sql, mirror) {
      await fake.exec(sql);
      mirror(rows);
    },
    vecsyncTables: async () => (await fake.engine.query("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'VECSYNC' ORDER BY TABLE_NAME")).rows.map((r) => String(r[0])),
    async [Symbol.asyncDispose]() {
      await proc?.[Symbol.asyncDispose]();
      await fake?.close();
    },
  };
}

/**
 * The brute-force expectation for a built-in model, computed by the fake's own EMBED_TEXT_768 and
 * VECTOR_COSINE_SIMILARITY over the texts the TEST renders from its copy of the source rows (never
 * the platform table's): every row with text passing `where`, best first, ties by numeric id.
 */
export async function builtInExpected(fake: FakeWarehouse, model: string, rows: Row[], body: QueryBody, where: (r: Row) => boolean = () => true): Promise<Expected[]> {
  const withText = rows.map((r) => ({ r, text: embeddedText(WH_COLUMNS, r) })).filter((x) => x.text !== null && where(x.r));
  if (withText.length === 0) return [];
  const embed = (text: string) => `SNOWFLAKE.CORTEX.EMBED_TEXT_768(${sqlValue(model)}, ${sqlValue(text)})`;
  const values = withText.map((x) => `(${Number(x.r.ID)}, ${sqlValue(x.text)})`).join(", ");
  const scored = await fake.engine.query(`SELECT T.ID, VECTOR_COSINE_SIMILARITY(SNOWFLAKE.CORTEX.EMBED_TEXT_768(${sqlValue(model)}, T.TX), ${embed(body.query)}) FROM (VALUES ${values}) AS T (ID, TX)`);
  const score = new Map(scored.rows.map((r) => [String(r[0]), Number(r[1])]));
  return withText
    .map(({ r, text }) => ({ id: String(r.ID), score: score.get(String(r.ID))!, metadata: metadataOf(WH_COLUMNS, r), embedded_text: text! }))
    .filter((x) => x.score >= (body.min_similarity_score ?? -Infinity))
    .sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id))
    .slice(0, body.limit ?? 10);
}
