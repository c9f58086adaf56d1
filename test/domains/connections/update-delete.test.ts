import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deleteOrganizationData } from "../../../src/domains/organizations/deletion.ts";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";
import { addDependent } from "../../helpers/dependents.ts";
import { newConnection, relationalCredentials, SECRET_PASSWORD, warehouseCredentials } from "./helpers.ts";

const clock = new FakeClock(new Date("2030-01-01T00:00:00Z"));
let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await newOrganization(app);
  // A stand-in for the vector-tables domain: connections named `busy-*` are used by one table.
  addDependent(app.services, "connection", {
    resource: "test-tables",
    count: async (orgId, connectionId) => {
      const res = await app.services.database.client.execute({ sql: "SELECT name FROM connections WHERE org_id = ? AND id = ?", args: [orgId, connectionId] });
      return String(res.rows[0]?.name ?? "").startsWith("busy-") ? 1 : 0;
    },
  });
});
afterAll(() => app[Symbol.asyncDispose]());

const put = (id: string, body: unknown, headers: Record<string, string> = org.owner.key) => app.request("PUT", `/v1/connections/${id}`, { headers, body });
const setStatus = (id: string, status: string) =>
  app.services.database.client.execute({ sql: "UPDATE connections SET status = ?, last_tested_at = ? WHERE id = ?", args: [status, "2030-01-01T00:00:00.000Z", id] });

describe("happy", () => {
  test("rename: 200 with the new name and updated_at; status untouched", async () => {
    const c = await newConnection(app, org.owner.key, { name: "before" });
    await setStatus(c.id, "connected");
    clock.advance(60_000);
    const res = await put(c.id, { name: "after" });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ id: c.id, name: "after", status: "connected", created_at: c.created_at });
    expect(body.updated_at > (c.created_at as string)).toBe(true);
    expect(await json(await app.request("GET", `/v1/connections/${c.id}`, { headers: org.owner.key }))).toEqual(body);
  });

  test.each(["connected", "failed"])("a credentials change sends a %s connection back to pending", async (status) => {
    const c = await newConnection(app, org.owner.key);
    await setStatus(c.id, status);
    const body = await json(await put(c.id, { credentials: relationalCredentials({ host: "10.0.0.9", port: 6543 }) }));
    expect(body).toMatchObject({ status: "pending", last_tested_at: null });
  });

  test("credentials are replaced whole and validated for the connection's provider", async () => {
    const wh = await newConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials() });
    expect((await put(wh.id, { credentials: relationalCredentials() })).status).toBe(400);
    expect((await put(wh.id, { credentials: warehouseCredentials({ role: "LOADER" }) })).status).toBe(200);
    const partial = await put(wh.id, { credentials: { password: "only-this" } });
    expect(partial.status).toBe(400);
  });

  test("an empty PUT changes nothing", async () => {
    const c = await newConnection(app, org.owner.key);
    expect(await json(await put(c.id, {}))).toEqual(c);
  });

  test("DELETE 204, then 404; the name is free again", async () => {
    const c = await newConnection(app, org.owner.key, { name: "short-lived" });
    expect((await app.request("DELETE", `/v1/connections/${c.id}`, { headers: org.owner.key })).status).toBe(204);
    expect((await app.request("GET", `/v1/connections/${c.id}`, { headers: org.owner.key })).status).toBe(404);
    await newConnection(app, org.owner.key, { name: "short-lived" });
  });

  test("an environment holding a connection cannot be deleted (409 in_use) until the connection is gone", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "holds-one" } }));
    const c = await newConnection(app, org.owner.key, { environmentId: env.id });
    const refused = await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key });
    expect(refused.status).toBe(409);
    expect((await json(refused)).error).toMatchObject({ code: "in_use", details: { attached: ["connections"] } });
    await app.request("DELETE", `/v1/connections/${c.id}`, { headers: org.owner.key });
    expect((await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key })).status).toBe(204);
  });

  test("deleting the organization deletes its connections", async () => {
    const doomed = await newOrganization(app);
    await newConnection(app, doomed.owner.key);
    await deleteOrganizationData(app.services, doomed.id);
    const left = await app.services.database.client.execute({ sql: "SELECT count(*) AS n FROM connections WHERE org_id = ?", args: [doomed.id] });
    expect(Number(left.rows[0]!.n)).toBe(0);
  });
});

describe("errors", () => {
  test("DELETE while a vector table uses the connection → 409 in_use", async () => {
    const c = await newConnection(app, org.owner.key, { name: "busy-orders" });
    const res = await app.request("DELETE", `/v1/connections/${c.id}`, { headers: org.owner.key });
    expect(res.status).toBe(409);
    expect((await json(res)).error).toMatchObject({ code: "in_use", details: { used_by: ["test-tables"] } });
  });

  test("rename onto another connection's name → 409 name_taken", async () => {
    await newConnection(app, org.owner.key, { name: "taken" });
    const c = await newConnection(app, org.owner.key);
    const res = await put(c.id, { name: "taken" });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("name_taken");
  });

  test("PUT refuses unknown fields (mode and provider cannot change) and bad credentials without echoing them", async () => {
    const c = await newConnection(app, org.owner.key);
    for (const body of [{ mode: "platform" }, { provider: "db_warehouse" }, { name: "" }, { credentials: relationalCredentials({ port: 0 }) }, { credentials: relationalCredentials({ secret: SECRET_PASSWORD }) }]) {
      const res = await put(c.id, body);
      expect(res.status).toBe(400);
      expect(await res.text()).not.toContain(SECRET_PASSWORD);
    }
  });

  test("unknown id → 404 for PUT and DELETE", async () => {
    expect((await put("0000000000000000000000000z", { name: "x" })).status).toBe(404);
    expect((await app.request("DELETE", "/v1/connections/0000000000000000000000000z", { headers: org.owner.key })).status).toBe(404);
  });
});

describe("authz", () => {
  test("a read_only key → 403 on PUT and DELETE, and nothing changes", async () => {
    const c = await newConnection(app, org.owner.key);
    const ro = await readOnlyKey(app, org.owner);
    for (const res of [await put(c.id, { name: "ro-rename" }, ro), await app.request("DELETE", `/v1/connections/${c.id}`, { headers: ro })]) {
      expect(res.status).toBe(403);
      expect((await json(res)).error.code).toBe("insufficient_permission");
    }
    expect(await json(await app.request("GET", `/v1/connections/${c.id}`, { headers: org.owner.key }))).toEqual(c);
  });

  test("a JWT → 401", async () => {
    const c = await newConnection(app, org.owner.key);
    expect((await put(c.id, { name: "jwt" }, org.owner.jwt)).status).toBe(401);
    expect((await app.request("DELETE", `/v1/connections/${c.id}`, { headers: org.owner.jwt })).status).toBe(401);
  });
});
