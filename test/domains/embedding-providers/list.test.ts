import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";

const clock = new FakeClock();
let app: TestApp;
let org: TestOrg;
let stagingId: string;
// 25 providers: even ones in prod, odd ones in staging.
const names = Array.from({ length: 25 }, (_, i) => `p-${String(i).padStart(2, "0")}`);

beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await newOrganization(app);
  stagingId = (await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }))).id;
  for (const [i, name] of names.entries()) {
    clock.advance(1000);
    const headers = i % 2 === 1 ? { ...org.owner.key, "x-environment-id": stagingId } : org.owner.key;
    const res = await app.request("POST", "/v1/embedding-providers", { headers, body: { name, provider: "local" } });
    expect(res.status).toBe(201);
  }
});
afterAll(() => app[Symbol.asyncDispose]());

type Page = { data: { name: string; environment_id: string }[]; pagination: { limit: number; has_more: boolean; next_cursor: string | null } };
const list = async (query: string, headers: Record<string, string> = org.owner.key) => app.request("GET", `/v1/embedding-providers${query}`, { headers });

async function walk(limit: number, headers: Record<string, string> = org.owner.key): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await json(await list(`?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, headers));
    expect(page.data.length).toBeLessThanOrEqual(limit);
    seen.push(...page.data.map((p) => p.name));
    cursor = page.pagination.next_cursor;
  } while (cursor);
  return seen;
}

describe("happy", () => {
  test("default limit 20, oldest first, the same envelope as every paginated list", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    const page: Page = await json(res);
    expect(page.data.map((p) => p.name)).toEqual(names.slice(0, 20));
    expect(page.pagination).toEqual({ limit: 20, has_more: true, next_cursor: expect.any(String) });
    const rest: Page = await json(await list(`?cursor=${encodeURIComponent(page.pagination.next_cursor!)}`));
    expect(rest.data.map((p) => p.name)).toEqual(names.slice(20));
    expect(rest.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
  });

  test("walking with limit 7 visits every provider once, in order", async () => {
    expect(await walk(7)).toEqual(names);
  });

  test("X-Environment-Id narrows the list to that environment, across pages", async () => {
    const staging = names.filter((_, i) => i % 2 === 1);
    expect(await walk(5, { ...org.owner.key, "x-environment-id": stagingId })).toEqual(staging);
    const page: Page = await json(await list("?limit=100", { ...org.owner.key, "x-environment-id": stagingId }));
    expect(page.data.every((p) => p.environment_id === stagingId)).toBe(true);
  });

  test("a read_only key may list", async () => {
    expect((await list("?limit=1", await readOnlyKey(app, org.owner))).status).toBe(200);
  });

  test("another organization sees none of them", async () => {
    const other = await newOrganization(app);
    expect(await json(await list("", other.owner.key))).toEqual({ data: [], pagination: { limit: 20, has_more: false, next_cursor: null } });
  });
});

describe("errors", () => {
  test.each(["0", "101", "-1", "abc", "1.5"])("400 for limit=%s", async (limit) => {
    const res = await list(`?limit=${limit}`);
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });

  test("400 for a forged cursor, and for a cursor of another list", async () => {
    expect((await list("?cursor=abc.def")).status).toBe(400);
    const envCursor = (await json(await app.request("GET", "/v1/environments?limit=1", { headers: org.owner.key }))).pagination.next_cursor;
    expect((await list(`?cursor=${encodeURIComponent(envCursor)}`)).status).toBe(400);
    // The narrowed list and the whole list are different lists.
    const narrowed: Page = await json(await list("?limit=2", { ...org.owner.key, "x-environment-id": stagingId }));
    expect((await list(`?cursor=${encodeURIComponent(narrowed.pagination.next_cursor!)}`)).status).toBe(400);
  });

  test("404 for an unknown or foreign X-Environment-Id", async () => {
    const other = await newOrganization(app);
    const foreign = (await json(await app.request("GET", "/v1/environments", { headers: other.owner.key }))).data[0].id;
    for (const envId of ["0000000000000000000000000a", foreign]) {
      const res = await list("", { ...org.owner.key, "x-environment-id": envId });
      expect(res.status).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
    }
  });
});

describe("authz", () => {
  test("401 for a JWT", async () => {
    expect((await list("", org.owner.jwt)).status).toBe(401);
  });
});
