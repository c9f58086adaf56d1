// GET /v1/vector-tables (cursor envelope, X-Environment-Id narrows), GET one, GET …/schema (the
// source table read live: names, Postgres type spellings, the key not nullable).
import { beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type TestOrg } from "../../helpers/organizations.ts";
import { localProvider, newTable, sourceConnection, tableBody, type Fixture, useTableWorld } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
let staging: { id: string };
let tables: any[];
useTableWorld({}, (w) => ({ app, pg, org, f } = w));
beforeAll(async () => {
  staging = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
  const g = { connectionId: await sourceConnection(app, org.owner.key, pg, { environmentId: staging.id }), providerId: await localProvider(app, org.owner.key, { environmentId: staging.id }) };
  tables = [];
  for (let i = 0; i < 5; i++) tables.push(await newTable(app, org.owner.key, tableBody(f, { name: `prod-${i}` })));
  for (let i = 0; i < 2; i++) tables.push(await newTable(app, org.owner.key, tableBody(g, { name: `staging-${i}` }), staging.id));
});

const list = (query = "", headers: Record<string, string> = org.owner.key) => app.request("GET", `/v1/vector-tables${query}`, { headers });

describe("happy", () => {
  test("pages of 3 in creation order, then the end; the whole list matches GET one", async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await json(await list(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`));
      expect(page.pagination.limit).toBe(3);
      seen.push(...page.data);
      cursor = page.pagination.next_cursor;
      expect(page.pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen.map((t) => t.id)).toEqual(tables.map((t) => t.id));
    for (const t of seen) expect(await json(await app.request("GET", `/v1/vector-tables/${t.id}`, { headers: org.owner.key }))).toEqual(t);
  });

  test("X-Environment-Id narrows the list; default page size 20", async () => {
    const page = await json(await list("", { ...org.owner.key, "x-environment-id": staging.id }));
    expect(page.data.map((t: { name: string }) => t.name)).toEqual(["staging-0", "staging-1"]);
    expect((await json(await list())).pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
  });

  test("schema: columns in table order with the source's type names; the key not nullable", async () => {
    const res = await app.request("GET", `/v1/vector-tables/${tables[0].id}/schema`, { headers: await readOnlyKey(app, org.owner) });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      columns: [
        { name: "id", type: "integer", nullable: false },
        { name: "title", type: "text", nullable: true },
        { name: "body", type: "text", nullable: true },
        { name: "category", type: "character varying(40)", nullable: true },
        { name: "price", type: "double precision", nullable: true },
        { name: "stock", type: "integer", nullable: true },
        { name: "active", type: "boolean", nullable: true },
      ],
    });
  });

  test("schema follows the source live: an added column shows up", async () => {
    await pg.sql`ALTER TABLE docs ADD COLUMN tags text[]`;
    const body = await json(await app.request("GET", `/v1/vector-tables/${tables[1].id}/schema`, { headers: org.owner.key }));
    expect(body.columns.at(-1)).toEqual({ name: "tags", type: "text[]", nullable: true });
  });

  test("tRPC list and get", async () => {
    const q = (name: string, input: unknown) => app.request("GET", `/trpc/vectorTables.${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: org.owner.key });
    expect((await json(await q("list", { limit: 2, environment_id: staging.id }))).result.data.data.map((t: { name: string }) => t.name)).toEqual(["staging-0", "staging-1"]);
    expect((await json(await q("get", { vector_table_id: tables[0].id }))).result.data).toEqual(tables[0]);
  });
});

describe("errors", () => {
  test("limit out of range or a foreign cursor → 400; unknown environment → 404; unknown table → 404", async () => {
    expect((await list("?limit=0")).status).toBe(400);
    expect((await list("?limit=101")).status).toBe(400);
    expect((await list("?cursor=forged.cursor")).status).toBe(400);
    const staged: any = await json(await list("?limit=1", { ...org.owner.key, "x-environment-id": staging.id }));
    expect((await list(`?cursor=${encodeURIComponent(staged.pagination.next_cursor)}`)).status).toBe(400);
    expect((await list("", { ...org.owner.key, "x-environment-id": "0000000000000000000000000a" })).status).toBe(404);
    expect((await app.request("GET", "/v1/vector-tables/0000000000000000000000000a", { headers: org.owner.key })).status).toBe(404);
  });

  test("schema of a table dropped from the source → 502 source_error", async () => {
    await pg.sql`CREATE TABLE doomed (id integer PRIMARY KEY, t text)`;
    const t = await newTable(app, org.owner.key, tableBody(f, { source_table: "doomed", columns: [{ name: "t", role: "embedding" }] }));
    await pg.sql`DROP TABLE doomed`;
    const res = await app.request("GET", `/v1/vector-tables/${t.id}/schema`, { headers: org.owner.key });
    expect([res.status, (await json(res)).error.code]).toEqual([502, "source_error"]);
  });
});

describe("authz", () => {
  test("another organization sees none of them", async () => {
    const other = await newOrganization(app);
    expect((await json(await list("", other.owner.key))).data).toEqual([]);
    expect((await app.request("GET", `/v1/vector-tables/${tables[0].id}`, { headers: other.owner.key })).status).toBe(404);
    expect((await app.request("GET", `/v1/vector-tables/${tables[0].id}/schema`, { headers: other.owner.key })).status).toBe(404);
  });
});
