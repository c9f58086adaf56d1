// POST /v1/vector-tables against a real Postgres source (a throwaway database) and the `local`
// embedding provider: the answer, the validation rules (docs/vector-tables.md#vector-tables, #storage-modes), the collection.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type TestOrg } from "../../helpers/organizations.ts";
import { createTable, DOC_COLUMNS, localProvider, newTable, sourceConnection, tableBody, type Fixture, useTableWorld } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const clock = new FakeClock(new Date("2030-03-01T00:00:00Z"));
let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
useTableWorld({ clock }, (w) => ({ app, pg, org, f } = w));

const FIELDS = [
  "id", "org_id", "environment_id", "connection_id", "embedding_provider_id", "name", "source_table", "primary_key_column", "columns", "embedding_model",
  "embedding_dimensions", "mode", "sync_mode", "sync_status", "vectorstore_collection", "platform_vector_ref", "total_rows", "synced_rows", "created_at", "updated_at",
].sort();

async function errorOf(res: Response) {
  const body = await json(res);
  return { status: res.status, code: body.error?.code, paths: (Array.isArray(body.error?.details) ? body.error.details : []).map((d: { path: string }) => d.path), message: body.error?.message as string };
}

describe("happy", () => {
  test("201: exactly the documented fields (docs/vector-tables.md#vector-tables), defaults, pending, zero counts, prod environment", async () => {
    const res = await createTable(app, org.owner.key, tableBody(f, { name: "Product Docs!" }));
    expect(res.status).toBe(201);
    const t = await json(res);
    expect(Object.keys(t).sort()).toEqual(FIELDS);
    const envs = (await json(await app.request("GET", "/v1/environments", { headers: org.owner.key }))).data;
    expect(t).toMatchObject({
      org_id: org.id,
      environment_id: envs.find((e: { name: string }) => e.name === "prod").id,
      connection_id: f.connectionId,
      embedding_provider_id: f.providerId,
      name: "Product Docs!",
      source_table: "docs",
      primary_key_column: "id",
      columns: DOC_COLUMNS,
      embedding_model: "local-lexical-v1",
      embedding_dimensions: 64,
      mode: "managed",
      sync_mode: "batch",
      sync_status: "pending",
      platform_vector_ref: null,
      total_rows: 0,
      synced_rows: 0,
      created_at: clock.now().toISOString(),
      updated_at: clock.now().toISOString(),
    });
    expect(t.id).toMatch(/^[0-9a-z]{16,}$/);
    expect(t.vectorstore_collection).toBe(`vt_${t.id.slice(0, 8)}_product_docs_`);
    expect(app.services.vectors.hasCollection(t.vectorstore_collection)).toBe(true);
    expect(await app.services.vectors.count(t.vectorstore_collection)).toBe(0);
    expect(await json(await app.request("GET", `/v1/vector-tables/${t.id}`, { headers: org.owner.key }))).toEqual(t);
  });

  test("sync_mode cdc, explicit mode equal to the connection's, X-Environment-Id picks the environment", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
    const g = { connectionId: await sourceConnection(app, org.owner.key, pg, { environmentId: env.id }), providerId: await localProvider(app, org.owner.key, { environmentId: env.id }) };
    const t = await newTable(app, org.owner.key, tableBody(g, { sync_mode: "cdc", mode: "managed" }), env.id);
    expect(t).toMatchObject({ environment_id: env.id, sync_mode: "cdc", mode: "managed" });
  });

  test("a text primary key and a warehouse-style name still create; optional column fields are kept", async () => {
    const columns = [{ name: "content", role: "embedding", name_prefix: "Note: ", ordinal: 3 }, { name: "slug", role: "metadata", filter_type: "keyword" }];
    const t = await newTable(app, org.owner.key, tableBody(f, { source_table: "notes", primary_key_column: "slug", columns }));
    expect(t.columns).toEqual(columns);
  });

  test("tRPC vectorTables.create answers the same object", async () => {
    const res = await app.request("POST", "/trpc/vectorTables.create", { headers: org.owner.key, body: tableBody(f, { name: "via-rpc" }) });
    expect(res.status).toBe(200);
    const t = (await json(res)).result.data;
    expect(Object.keys(t).sort()).toEqual(FIELDS);
    expect(t.name).toBe("via-rpc");
  });
});

describe("errors", () => {
  test.each([
    ["no embedding column", { columns: [{ name: "category", role: "metadata", filter_type: "keyword" }] }, ["columns"]],
    ["metadata column without filter_type", { columns: [{ name: "title", role: "embedding" }, { name: "category", role: "metadata" }] }, ["columns.1.filter_type"]],
    ["filter_type on an embedding column", { columns: [{ name: "title", role: "embedding", filter_type: "keyword" }] }, ["columns.0.filter_type"]],
    ["name_prefix on a metadata column", { columns: [{ name: "title", role: "embedding" }, { name: "category", role: "metadata", filter_type: "keyword", name_prefix: "x" }] }, ["columns.1.name_prefix"]],
    ["a column listed twice", { columns: [{ name: "title", role: "embedding" }, { name: "title", role: "metadata", filter_type: "keyword" }] }, ["columns.1.name"]],
    ["empty columns", { columns: [] }, ["columns"]],
    ["unknown filter_type", { columns: [{ name: "title", role: "embedding" }, { name: "category", role: "metadata", filter_type: "date" }] }, ["columns.1.filter_type"]],
    ["name too long", { name: "x".repeat(101) }, ["name"]],
    ["model not in the provider's catalog", { embedding_model: "text-embedding-3-small" }, ["embedding_model"]],
    ["dimensions beyond the model", { embedding_dimensions: 1024 }, ["embedding_dimensions"]],
    ["non-integer dimensions", { embedding_dimensions: 12.5 }, ["embedding_dimensions"]],
    ["unknown mode", { mode: "hybrid" }, ["mode"]],
    ["mode other than the connection's", { mode: "platform" }, ["mode"]],
    ["managed mode without a provider", { embedding_provider_id: null }, ["embedding_provider_id"]],
    ["an unknown field", { colour: "blue" }, ["colour"]],
  ])("%s → 400 validation_error naming the field", async (_, over, paths) => {
    const e = await errorOf(await createTable(app, org.owner.key, tableBody(f, over)));
    expect(e).toMatchObject({ status: 400, code: "validation_error" });
    expect(e.paths).toEqual(paths);
  });

  test.each([
    ["source_table", { source_table: "no_such_table" }, ["source_table"]],
    ["primary_key_column", { primary_key_column: "uuid" }, ["primary_key_column"]],
    ["a configured column", { columns: [{ name: "title", role: "embedding" }, { name: "colour", role: "metadata", filter_type: "keyword" }] }, ["columns.1.name"]],
    ["a column in another case (Postgres names are exact)", { columns: [{ name: "Title", role: "embedding" }] }, ["columns.0.name"]],
  ])("unknown %s in the live source schema → 400 naming it", async (_, over, paths) => {
    const e = await errorOf(await createTable(app, org.owner.key, tableBody(f, over)));
    expect(e).toMatchObject({ status: 400, code: "validation_error", paths });
  });

  test("a source that cannot be reached → 502 source_error with the source's words", async () => {
    const res = await app.request("POST", "/v1/providers/db_relational/connections", {
      headers: org.owner.key,
      body: { name: "no-such-db", mode: "managed", credentials: { host: "127.0.0.1", database: `${pg.name}_missing`, user: "postgres", password: "pw-not-to-leak" } },
    });
    const e = await errorOf(await createTable(app, org.owner.key, tableBody({ ...f, connectionId: (await json(res)).id })));
    expect(e).toMatchObject({ status: 502, code: "source_error" });
    expect(e.message).toContain("_missing");
    expect(e.message).not.toContain("pw-not-to-leak");
  });

  test("connection or provider in another environment → 400; unknown ones → 404", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "other" } }));
    const e = await errorOf(await createTable(app, org.owner.key, tableBody(f), env.id));
    expect(e).toMatchObject({ status: 400, code: "validation_error", paths: ["connection_id", "embedding_provider_id"] });
    expect((await errorOf(await createTable(app, org.owner.key, tableBody({ ...f, connectionId: "0000000000000000000000000a" })))).status).toBe(404);
    expect((await errorOf(await createTable(app, org.owner.key, tableBody({ ...f, providerId: "0000000000000000000000000a" })))).status).toBe(404);
    expect((await errorOf(await createTable(app, org.owner.key, tableBody(f), "0000000000000000000000000a"))).status).toBe(404);
  });

  test("a name taken in the organization → 409 name_taken, and no second collection", async () => {
    await newTable(app, org.owner.key, tableBody(f, { name: "dup" }));
    const before = app.services.vectors.listCollections().length;
    expect(await errorOf(await createTable(app, org.owner.key, tableBody(f, { name: "dup" })))).toMatchObject({ status: 409, code: "name_taken" });
    expect(app.services.vectors.listCollections().length).toBe(before);
  });

  test("platform mode: a relational connection needs a provider, and the vector extension (400 saying what to run); then its table is made, no managed collection", async () => {
    const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform" });
    const e = await errorOf(await createTable(app, org.owner.key, tableBody({ connectionId: conn, providerId: f.providerId }, { embedding_provider_id: null })));
    expect(e).toMatchObject({ status: 400, paths: ["embedding_provider_id"] });
    const body = tableBody({ connectionId: conn, providerId: f.providerId }, { name: "Platform Docs" });
    const missing = await errorOf(await createTable(app, org.owner.key, body));
    expect(missing).toMatchObject({ status: 400, code: "validation_error", paths: ["connection_id"] });
    expect(missing.message).toContain("CREATE EXTENSION vector;");
    expect((await json(await app.request("GET", "/v1/vector-tables?limit=100", { headers: org.owner.key }))).data.some((t: { name: string }) => t.name === "Platform Docs")).toBe(false);

    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const t = await newTable(app, org.owner.key, body);
    expect(t).toMatchObject({ mode: "platform", platform_vector_ref: `vecsync.vt_${t.id.slice(0, 8)}_platform_docs` });
    expect(app.services.vectors.hasCollection(t.vectorstore_collection)).toBe(false);
    const columns = await pg.sql`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'vecsync' AND table_name = ${`vt_${t.id.slice(0, 8)}_platform_docs`} ORDER BY ordinal_position`;
    expect(columns.map((c) => c.column_name)).toEqual(["id", "embedded_text", "category", "price", "stock", "active", "embedding", "vecsync_text_hash", "vecsync_meta_hash", "vecsync_terms", "vecsync_length"]);
    expect(columns[0]!.data_type).toBe("integer");
    // A metadata column named as a column the platform table keeps for itself cannot be held.
    const clash = await errorOf(await createTable(app, org.owner.key, tableBody({ connectionId: conn, providerId: f.providerId }, { name: "clash", columns: [...DOC_COLUMNS, { name: "id", role: "metadata", filter_type: "integer" }] })));
    expect(clash).toMatchObject({ status: 400, paths: ["columns"] });
    expect((await app.request("DELETE", `/v1/vector-tables/${t.id}`, { headers: org.owner.key })).status).toBe(204);
    expect(await pg.sql`SELECT 1 FROM pg_tables WHERE schemaname = 'vecsync'`).toHaveLength(0);
  });
});

describe("authz", () => {
  test("a read_only key → 403 insufficient_permission, nothing created", async () => {
    const ro = await readOnlyKey(app, org.owner);
    expect(await errorOf(await createTable(app, ro, tableBody(f, { name: "ro-made" })))).toMatchObject({ status: 403, code: "insufficient_permission" });
    const list = await json(await app.request("GET", "/v1/vector-tables?limit=100", { headers: org.owner.key }));
    expect(list.data.some((t: { name: string }) => t.name === "ro-made")).toBe(false);
  });

  test("another organization's connection, provider or environment → 404", async () => {
    const other = await newOrganization(app);
    const g = { connectionId: await sourceConnection(app, other.owner.key, pg), providerId: await localProvider(app, other.owner.key) };
    expect((await errorOf(await createTable(app, org.owner.key, tableBody({ ...f, connectionId: g.connectionId })))).status).toBe(404);
    expect((await errorOf(await createTable(app, org.owner.key, tableBody({ ...f, providerId: g.providerId })))).status).toBe(404);
  });
});
