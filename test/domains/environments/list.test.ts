import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, type TestOrg, json } from "../../helpers/organizations.ts";

const clock = new FakeClock();
let app: TestApp;
let org: TestOrg;
const names = ["prod", ...Array.from({ length: 24 }, (_, i) => `env-${String(i).padStart(2, "0")}`)];

beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await newOrganization(app);
  for (const name of names.slice(1)) {
    clock.advance(1000);
    await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name } });
  }
});
afterAll(() => app[Symbol.asyncDispose]());

const list = (query: string, headers = org.owner.key) => app.request("GET", `/v1/environments${query}`, { headers });

describe("happy", () => {
  test("default limit 20, oldest first, with a cursor to the rest", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    const page = await json(res);
    expect(page.data.map((e: { name: string }) => e.name)).toEqual(names.slice(0, 20));
    expect(page.pagination).toEqual({ limit: 20, has_more: true, next_cursor: expect.any(String) });
    const rest = await json(await list(`?cursor=${encodeURIComponent(page.pagination.next_cursor)}`));
    expect(rest.data.map((e: { name: string }) => e.name)).toEqual(names.slice(20));
    expect(rest.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
  });

  test("walking with limit 7 visits every environment once, in order", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await json(await list(query));
      expect(page.data.length).toBeLessThanOrEqual(7);
      seen.push(...page.data.map((e: { name: string }) => e.name));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(names);
  });

  test("rows created in the same millisecond are ordered by id and none is skipped", async () => {
    await using same = await createTestApp({ clock: new FakeClock() });
    const o = await newOrganization(same);
    for (let i = 0; i < 5; i++) await same.request("POST", "/v1/environments", { headers: o.owner.key, body: { name: `same-${i}` } });
    const all = (await json(await same.request("GET", "/v1/environments?limit=100", { headers: o.owner.key }))).data as { id: string }[];
    expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort());
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { id: string }[]; pagination: { next_cursor: string | null } } = await json(await same.request("GET", `/v1/environments?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: o.owner.key }));
      seen.push(...page.data.map((e) => e.id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.id));
  });

  test("a read_only key may list", async () => {
    const ro = await readOnlyKey(app, org.owner);
    expect((await list("?limit=1", ro)).status).toBe(200);
  });
});

describe("errors", () => {
  test.each(["0", "101", "-1", "abc", "1.5"])("400 for limit=%s", async (limit) => {
    const res = await list(`?limit=${limit}`);
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });

  test("400 for a cursor we did not issue, or one altered", async () => {
    const page = await json(await list("?limit=1"));
    const good: string = page.pagination.next_cursor;
    const forged = Buffer.from(JSON.stringify(["1970-01-01T00:00:00.000Z", "0"])).toString("base64url");
    const altered = `${forged}.${good.split(".")[1]}`;
    for (const cursor of ["garbage", forged, altered, `${good}x`, `${good}.x`]) {
      const res = await list(`?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect((await json(res)).error.code).toBe("validation_error");
    }
  });

  test("400 unknown query parameter", async () => {
    expect((await list("?page=2")).status).toBe(400);
  });
});

describe("authz", () => {
  test("a cursor from one organization's list is refused in another's", async () => {
    const other = await newOrganization(app);
    await app.request("POST", "/v1/environments", { headers: other.owner.key, body: { name: "extra" } });
    const page = await json(await list("?limit=1"));
    const res = await list(`?cursor=${encodeURIComponent(page.pagination.next_cursor)}`, other.owner.key);
    expect(res.status).toBe(400);
  });

  test("only the caller's organization's environments are listed", async () => {
    const other = await newOrganization(app);
    const page = await json(await list("?limit=100", other.owner.key));
    expect(page.data.map((e: { org_id: string }) => e.org_id)).toEqual([other.id]);
  });
});
