import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";
import { newConnection, SECRET_PASSWORD } from "./helpers.ts";

let app: TestApp;
let org: TestOrg;
let staging: { id: string };
const ids: string[] = [];
beforeAll(async () => {
  app = await createTestApp();
  org = await newOrganization(app);
  staging = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
  for (let i = 0; i < 5; i++) ids.push((await newConnection(app, org.owner.key, { name: `c${i}`, environmentId: i % 2 ? staging.id : undefined })).id);
});
afterAll(() => app[Symbol.asyncDispose]());

const list = (query: string, headers: Record<string, string> = org.owner.key) => app.request("GET", `/v1/connections${query}`, { headers });

describe("happy", () => {
  test("pages through every connection, oldest first, with the cursor envelope", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.pagination.limit).toBe(2);
      seen.push(...body.data.map((c: { id: string }) => c.id));
      cursor = body.pagination.next_cursor;
      expect(body.pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    // Same-millisecond rows are ordered by id, so compare as sets, then check the order itself.
    expect([...seen].sort()).toEqual([...ids].sort());
    const all = (await json(await list("?limit=100"))).data as { id: string; created_at: string }[];
    const key = (c: { id: string; created_at: string }) => `${c.created_at} ${c.id}`;
    expect(all.map(key)).toEqual(all.map(key).sort());
    expect(all.map((c) => c.id)).toEqual(seen);
  });

  test("X-Environment-Id narrows the list", async () => {
    const body = await json(await list("", { ...org.owner.key, "x-environment-id": staging.id }));
    expect(body.data.map((c: { id: string }) => c.id).sort()).toEqual([ids[1], ids[3]].sort());
    expect(body.data.every((c: { environment_id: string }) => c.environment_id === staging.id)).toBe(true);
  });

  test("GET by id answers the Connection object without credentials", async () => {
    const res = await app.request("GET", `/v1/connections/${ids[0]}`, { headers: org.owner.key });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(SECRET_PASSWORD);
    expect(Object.keys(JSON.parse(text)).sort()).toEqual(["created_at", "environment_id", "id", "last_tested_at", "mode", "name", "org_id", "provider", "status", "updated_at"]);
  });

  test("tRPC list and get answer the same objects", async () => {
    const rest = await json(await list("?limit=100"));
    const rpc = await json(await app.request("GET", `/trpc/connections.list?input=${encodeURIComponent(JSON.stringify({ limit: 100 }))}`, { headers: org.owner.key }));
    expect(rpc.result.data).toEqual(rest);
    const one = await json(await app.request("GET", `/trpc/connections.get?input=${encodeURIComponent(JSON.stringify({ connection_id: ids[2] }))}`, { headers: org.owner.key }));
    expect(one.result.data).toEqual(rest.data.find((c: { id: string }) => c.id === ids[2]));
  });
});

describe("errors", () => {
  test("unknown id → 404 not_found", async () => {
    const res = await app.request("GET", "/v1/connections/0000000000000000000000000z", { headers: org.owner.key });
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe("not_found");
  });

  test("limit out of range, a forged cursor, or a cursor from another environment's list → 400", async () => {
    for (const q of ["?limit=0", "?limit=101", "?cursor=abc.def"]) expect((await list(q)).status).toBe(400);
    const narrowed = await json(await list("?limit=1", { ...org.owner.key, "x-environment-id": staging.id }));
    expect((await list(`?limit=1&cursor=${encodeURIComponent(narrowed.pagination.next_cursor)}`)).status).toBe(400);
  });

  test("unknown X-Environment-Id on the list → 404", async () => {
    expect((await list("", { ...org.owner.key, "x-environment-id": "0000000000000000000000000z" })).status).toBe(404);
  });
});

describe("authz", () => {
  test("a read_only key may list and get; a JWT may not (401)", async () => {
    const ro = await readOnlyKey(app, org.owner);
    expect((await list("", ro)).status).toBe(200);
    expect((await app.request("GET", `/v1/connections/${ids[0]}`, { headers: ro })).status).toBe(200);
    expect((await list("", org.owner.jwt)).status).toBe(401);
    expect((await app.request("GET", `/v1/connections/${ids[0]}`, { headers: org.owner.jwt })).status).toBe(401);
  });

  test("another organization sees none of them", async () => {
    const other = await newOrganization(app);
    expect((await json(await list("", other.owner.key))).data).toEqual([]);
    expect((await app.request("GET", `/v1/connections/${ids[0]}`, { headers: other.owner.key })).status).toBe(404);
  });
});
