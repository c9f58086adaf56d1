// PUT /v1/vector-tables/{id}: renames change nothing else; a change of columns, model or
// dimensions sets pending_rebackfill, bumps config_version and queues exactly one rebackfill.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { type TestApp } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type TestOrg } from "../../helpers/organizations.ts";
import { activeTasksOf, DOC_COLUMNS, newTable, tableBody, type Fixture, useTableWorld } from "./helpers.ts";
import { vectorTables } from "../../../src/domains/vector-tables/tables.ts";
import { eq } from "drizzle-orm";
import { tasks } from "../../../src/scheduler/tables.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const clock = new FakeClock(new Date("2030-04-01T00:00:00Z"));
let app: TestApp, org: TestOrg, f: Fixture;
useTableWorld({ clock }, (w) => ({ app, org, f } = w));

const put = (id: string, body: unknown, key = org.owner.key) => app.request("PUT", `/v1/vector-tables/${id}`, { headers: key, body });
const configVersion = async (id: string) => (await app.services.database.db.select().from(vectorTables).where(eq(vectorTables.id, id)))[0]!.configVersion;

async function errorOf(res: Response) {
  const e = (await json(res)).error;
  return { status: res.status, code: e?.code, paths: Array.isArray(e?.details) ? e.details.map((d: { path: string }) => d.path) : [] };
}

describe("happy", () => {
  test("a rename answers the updated table, keeps the collection and the status, queues nothing", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    clock.advance(60_000);
    const res = await put(t.id, { name: "renamed" });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ...t, name: "renamed", updated_at: clock.now().toISOString() });
    expect(await activeTasksOf(app, t.id)).toEqual([]);
  });

  test.each([
    ["columns", { columns: [...DOC_COLUMNS, { name: "id", role: "metadata", filter_type: "integer" }] }],
    ["embedding_model's dimensions", { embedding_dimensions: 128 }],
    ["the order of embedding columns", { columns: DOC_COLUMNS.map((c) => (c.name === "title" ? { ...c, ordinal: 9 } : c)) }],
  ])("a change of %s → pending_rebackfill, config_version + 1, one rebackfill task", async (_, body) => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const res = await put(t.id, body);
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated).toMatchObject({ ...body, sync_status: "pending_rebackfill", vectorstore_collection: t.vectorstore_collection });
    expect(await configVersion(t.id)).toBe(2);
    const active = await activeTasksOf(app, t.id);
    expect(active.map((x) => ({ type: x.taskType, payload: x.payload, priority: x.priority, key: x.exclusiveKey }))).toEqual([
      { type: "rebackfill", payload: { vector_table_id: t.id, config_version: 2 }, priority: 3, key: `backfill:${t.id}` },
    ]);
  });

  test("a second change while the rebackfill is pending bumps the version again and still one task", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await put(t.id, { embedding_dimensions: 128 });
    const res = await put(t.id, { embedding_dimensions: 256, name: "again" });
    expect(await json(res)).toMatchObject({ embedding_dimensions: 256, name: "again", sync_status: "pending_rebackfill" });
    expect(await configVersion(t.id)).toBe(3);
    expect(await activeTasksOf(app, t.id)).toHaveLength(1);
  });

  test("sending the same configuration again is no change", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const res = await put(t.id, { columns: DOC_COLUMNS, embedding_model: "local-lexical-v1", embedding_dimensions: 64 });
    expect(await json(res)).toEqual(t);
    expect(await activeTasksOf(app, t.id)).toEqual([]);
  });

  test("tRPC vectorTables.update answers the same shape", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const res = await app.request("POST", "/trpc/vectorTables.update", { headers: org.owner.key, body: { vector_table_id: t.id, name: "rpc-renamed" } });
    expect((await json(res)).result.data).toMatchObject({ id: t.id, name: "rpc-renamed" });
  });
});

describe("errors", () => {
  test.each([
    ["no embedding column", { columns: [{ name: "category", role: "metadata", filter_type: "keyword" }] }, ["columns"]],
    ["a column the source lacks", { columns: [...DOC_COLUMNS, { name: "colour", role: "metadata", filter_type: "keyword" }] }, ["columns.6.name"]],
    ["dimensions beyond the model", { embedding_dimensions: 4096 }, ["embedding_dimensions"]],
    ["a model of another provider", { embedding_model: "emb_c-3.5" }, ["embedding_model"]],
    ["a field that cannot change", { source_table: "notes" }, ["source_table"]],
  ])("%s → 400, nothing changed", async (_, body, paths) => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect(await errorOf(await put(t.id, body))).toEqual({ status: 400, code: "validation_error", paths });
    expect(await json(await app.request("GET", `/v1/vector-tables/${t.id}`, { headers: org.owner.key }))).toEqual(t);
  });

  test("a name taken → 409 name_taken; an unknown id → 404", async () => {
    const a = await newTable(app, org.owner.key, tableBody(f));
    const b = await newTable(app, org.owner.key, tableBody(f));
    expect(await errorOf(await put(b.id, { name: a.name }))).toMatchObject({ status: 409, code: "name_taken" });
    expect((await put("0000000000000000000000000a", { name: "x" })).status).toBe(404);
  });
});

describe("authz", () => {
  test("a read_only key → 403; another organization → 404", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect(await errorOf(await put(t.id, { name: "ro" }, await readOnlyKey(app, org.owner)))).toMatchObject({ status: 403, code: "insufficient_permission" });
    const other = await newOrganization(app);
    expect(await errorOf(await put(t.id, { name: "x" }, other.owner.key))).toMatchObject({ status: 404, code: "not_found" });
  });
});
