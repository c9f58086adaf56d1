// POST /v1/connections/{id}/test against the real PostgreSQL on the machine (a throwaway database).
// pg_hba here trusts 127.0.0.1, so a wrong password is accepted: failures are made with a closed
// port, a missing database and a missing role instead.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { createServer } from "node:net";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, PG_ADMIN_URL, throwawayPostgres, type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";
import { newConnection, relationalCredentials, SECRET_PASSWORD, warehouseCredentials } from "./helpers.ts";
import { startFakeWarehouse } from "../../fakes/warehouse/server.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const clock = new FakeClock(new Date("2030-02-01T00:00:00Z"));
let app: TestApp;
let org: TestOrg;
let pg: ThrowawayDatabase;
const pgUser = new URL(PG_ADMIN_URL).username || "postgres";
const pgPort = Number(new URL(PG_ADMIN_URL).port || 5432);
beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await newOrganization(app);
  pg = await throwawayPostgres();
});
afterAll(async () => {
  await pg[Symbol.asyncDispose]();
  await app[Symbol.asyncDispose]();
});

const local = (over: Record<string, unknown> = {}) => relationalCredentials({ host: "127.0.0.1", port: pgPort, database: pg.name, user: pgUser, ...over });
const runTest = (id: string, headers: Record<string, string> = org.owner.key) => app.request("POST", `/v1/connections/${id}/test`, { headers });
const getConnection = async (id: string) => json(await app.request("GET", `/v1/connections/${id}`, { headers: org.owner.key }));

/** A port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The answer as text (checked for the secret) and parsed. */
async function answer(res: Response) {
  const text = await res.text();
  expect(text).not.toContain(SECRET_PASSWORD);
  return { status: res.status, body: JSON.parse(text), text };
}

describe("happy", () => {
  test("a reachable database: connected with latency_ms; status and last_tested_at are stored", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local() });
    const { status, body } = await answer(await runTest(c.id));
    expect(status).toBe(200);
    // The machine's Postgres has pgvector's files; a fresh database has not installed it.
    expect(body).toEqual({ status: "connected", details: { latency_ms: expect.any(Number), pgvector: { installed: false, available: true, version: expect.any(String), usable: false } } });
    expect(Number.isInteger(body.details.latency_ms) && body.details.latency_ms >= 0).toBe(true);
    expect(await getConnection(c.id)).toMatchObject({ status: "connected", last_tested_at: clock.now().toISOString(), updated_at: c.updated_at });
  });

  test("a host name is resolved, vetted and connected to (localhost)", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ host: "localhost" }) });
    expect((await answer(await runTest(c.id))).body.status).toBe("connected");
  });

  test("status transitions: pending → connected → failed → pending (credentials change) → connected", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local() });
    expect((await getConnection(c.id)).status).toBe("pending");
    await runTest(c.id);
    expect((await getConnection(c.id)).status).toBe("connected");
    await app.request("PUT", `/v1/connections/${c.id}`, { headers: org.owner.key, body: { credentials: local({ port: await closedPort() }) } });
    expect((await getConnection(c.id)).status).toBe("pending");
    clock.advance(1000);
    await runTest(c.id);
    expect(await getConnection(c.id)).toMatchObject({ status: "failed", last_tested_at: clock.now().toISOString() });
    await app.request("PUT", `/v1/connections/${c.id}`, { headers: org.owner.key, body: { credentials: local() } });
    expect(await getConnection(c.id)).toMatchObject({ status: "pending", last_tested_at: null });
    await runTest(c.id);
    expect((await getConnection(c.id)).status).toBe("connected");
  });

  test("tRPC connections.test answers the same result", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local() });
    const res = await app.request("POST", "/trpc/connections.test", { headers: org.owner.key, body: { connection_id: c.id } });
    expect((await json(res)).result.data).toMatchObject({ status: "connected" });
  });
});

describe("errors", () => {
  test("a closed port: 200 failed with the connection error; status failed", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ port: await closedPort() }) });
    const { status, body } = await answer(await runTest(c.id));
    expect(status).toBe(200);
    expect(body).toEqual({ status: "failed", details: { error: expect.stringMatching(/ECONNREFUSED|refused/i) } });
    expect((await getConnection(c.id)).status).toBe("failed");
  });

  test("a database that does not exist: failed with the database's own words", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ database: "no_such_database_here" }) });
    const { body } = await answer(await runTest(c.id));
    expect(body).toEqual({ status: "failed", details: { error: expect.stringContaining('database "no_such_database_here" does not exist') } });
  });

  test("a role that does not exist: failed", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ user: "no_such_role_here" }) });
    const { body } = await answer(await runTest(c.id));
    expect(body).toEqual({ status: "failed", details: { error: expect.stringContaining('role "no_such_role_here" does not exist') } });
  });

  test("an error text that would quote the password has it scrubbed", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ database: SECRET_PASSWORD }) });
    const { body } = await answer(await runTest(c.id));
    expect(body).toEqual({ status: "failed", details: { error: expect.stringContaining('database "***" does not exist') } });
  });

  test("a warehouse connection tests through snowflake-sdk against the warehouse test server", async () => {
    const fake = await startFakeWarehouse({ users: [{ user: "LOADER", password: SECRET_PASSWORD }] });
    try {
      await using wh = await createTestApp({ env: { VECSYNC_WAREHOUSE_URL: fake.url } });
      const o = await newOrganization(wh);
      const credentials = warehouseCredentials({ account: fake.account, database: fake.database });
      const good = await newConnection(wh, o.owner.key, { provider: "db_warehouse", credentials });
      const ok = await answer(await wh.request("POST", `/v1/connections/${good.id}/test`, { headers: o.owner.key }));
      expect(ok.body).toEqual({ status: "connected", details: { latency_ms: expect.any(Number) } });

      const bad = await newConnection(wh, o.owner.key, { provider: "db_warehouse", credentials: { ...credentials, password: "not-the-password" } });
      const failed = await answer(await wh.request("POST", `/v1/connections/${bad.id}/test`, { headers: o.owner.key }));
      expect(failed.status).toBe(200);
      expect(failed.body.status).toBe("failed");
      expect(failed.text).not.toContain("not-the-password");
    } finally {
      await fake.close();
    }
  });

  test("a host the deny list refuses once resolved → 400 validation_error; status stays pending", async () => {
    await using denying = await createTestApp({ env: { VECSYNC_DENY_HOSTS: "127.0.0.0/8,::1" } });
    const o = await newOrganization(denying);
    const literal = await denying.request("POST", "/v1/providers/db_relational/connections", { headers: o.owner.key, body: { name: "lit", mode: "managed", credentials: local() } });
    expect(literal.status).toBe(400);
    const c = await newConnection(denying, o.owner.key, { credentials: local({ host: "localhost" }) });
    const res = await denying.request("POST", `/v1/connections/${c.id}/test`, { headers: o.owner.key });
    const { status, body } = await answer(res);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "validation_error", details: [{ path: "credentials.host", message: expect.stringContaining("deny list") }] });
    expect((await json(await denying.request("GET", `/v1/connections/${c.id}`, { headers: o.owner.key }))).status).toBe("pending");
  });

  test("an IPv6 address is dialled as that address (nothing listens on ::1 here, so it is refused)", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local({ host: "::1" }) });
    const { body } = await answer(await runTest(c.id));
    expect(body.status).toBe("failed");
    expect(body.details.error).toMatch(/ECONNREFUSED|refused/i);
  });

  test("unknown id → 404", async () => {
    expect((await runTest("0000000000000000000000000z")).status).toBe(404);
  });
});

describe("authz", () => {
  test("a read_only key → 403 (the test stores its outcome), and the status is untouched; a JWT → 401", async () => {
    const c = await newConnection(app, org.owner.key, { credentials: local() });
    const ro = await readOnlyKey(app, org.owner);
    const res = await runTest(c.id, ro);
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
    expect((await runTest(c.id, org.owner.jwt)).status).toBe(401);
    expect((await getConnection(c.id)).status).toBe("pending");
  });
});
