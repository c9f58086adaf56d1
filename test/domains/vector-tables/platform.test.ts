// Platform mode on a relational connection, at its edges: a user without the privilege to create
// the schema gets 400 in the database's own words; columns a platform table cannot hold are
// refused on PUT too; the vector budget stops a platform backfill as it does a managed one;
// deleting the organization drops the table.
import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import postgres from "postgres";
import { eventually, PG_ADMIN_URL, type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, type TestOrg } from "../../helpers/organizations.ts";
import { createTable, DOC_COLUMNS, newTable, sourceConnection, tableBody, type Fixture, useTableWorld } from "./helpers.ts";

setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
useTableWorld({}, (w) => ({ app, pg, org, f } = w));

const role = `vecsync_limited_${crypto.randomUUID().slice(0, 8)}`;
// Roles are the server's, not the database's: dropped once the world's database is gone (which owned its grants).
afterAll(async () => {
  const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} });
  await eventually(async () => {
    await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
    return true;
  }, 10_000, 200).catch(() => {});
  await admin.end({ timeout: 5 });
});

const vecsyncTables = async () => (await pg.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'vecsync'`).map((r) => r.tablename as string);

describe("errors", () => {
  test("a user who may read the source but not create the schema vecsync: 400 in the database's words, saying what is needed", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    await pg.sql.unsafe(`CREATE ROLE ${role} LOGIN; GRANT SELECT ON docs TO ${role}; REVOKE CREATE ON DATABASE ${pg.name} FROM PUBLIC`);
    const port = Number(new URL(PG_ADMIN_URL).port || 5432);
    const res = await app.request("POST", "/v1/providers/db_relational/connections", {
      headers: org.owner.key,
      body: { name: "limited", mode: "platform", credentials: { host: "127.0.0.1", port, database: pg.name, user: role, password: "unused-trust-auth" } },
    });
    const connectionId = (await json(res)).id;
    const answer = await createTable(app, org.owner.key, tableBody({ connectionId, providerId: f.providerId }, { name: "limited" }));
    const body = await json(answer);
    expect([answer.status, body.error.code]).toEqual([400, "validation_error"]);
    expect(body.error.message).toContain(`permission denied for database ${pg.name}`);
    expect(body.error.message).toContain(`needs CREATE on database "${pg.name}"`);
    expect(await vecsyncTables()).toEqual([]);
  });

  test("PUT columns that a platform table cannot hold (a reserved name, the key again) → 400 naming them; nothing queued", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform" });
    const t = await newTable(app, org.owner.key, tableBody({ connectionId: conn, providerId: f.providerId }, { name: "put-checks" }));
    const res = await app.request("PUT", `/v1/vector-tables/${t.id}`, { headers: org.owner.key, body: { columns: [...DOC_COLUMNS, { name: "id", role: "metadata", filter_type: "integer" }] } });
    const body = await json(res);
    expect([res.status, body.error.details.map((d: { path: string }) => d.path)]).toEqual([400, ["columns"]]);
    expect(body.error.details[0].message).toContain("is the primary key");
    expect((await json(await app.request("GET", `/v1/vector-tables/${t.id}`, { headers: org.owner.key }))).sync_status).toBe("pending");
  });
});

describe("happy", () => {
  test("vector budget: a platform backfill stores what fits, stops, and names the budget", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const { vectorAllowance } = await import("../../../src/domains/sync/budget.ts");
    const config = app.services.config as { freeVectorBudget: number };
    const before = config.freeVectorBudget;
    config.freeVectorBudget = before - (await vectorAllowance(app.services, org.id)) + 7;
    try {
      const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform" });
      const t = await newTable(app, org.owner.key, tableBody({ connectionId: conn, providerId: f.providerId }, { name: "budgeted" }));
      app.services.scheduler.start();
      expect((await app.request("POST", `/v1/vector-tables/${t.id}/backfill`, { headers: org.owner.key })).status).toBe(200);
      const status = await eventually(async () => {
        const s = await json(await app.request("GET", `/v1/vector-tables/${t.id}/sync/status`, { headers: org.owner.key }));
        return s.sync_status === "error" && s;
      }, 15_000);
      expect(status.last_error).toContain("vector budget exceeded");
      const [stored] = await pg.sql.unsafe(`SELECT count(*)::int AS n FROM ${t.platform_vector_ref}`);
      expect(stored!.n).toBe(7);
    } finally {
      config.freeVectorBudget = before;
    }
  });

  test("deleting the organization drops its platform tables from the source", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const { newOrganization } = await import("../../helpers/organizations.ts");
    const doomed = await newOrganization(app);
    const conn = await sourceConnection(app, doomed.owner.key, pg, { mode: "platform" });
    const { localProvider } = await import("./helpers.ts");
    const t = await newTable(app, doomed.owner.key, tableBody({ connectionId: conn, providerId: await localProvider(app, doomed.owner.key) }, { name: "doomed" }));
    const name = t.platform_vector_ref.split(".")[1];
    expect(await vecsyncTables()).toContain(name);
    app.services.scheduler.start();
    expect((await app.request("DELETE", `/v1/organizations/${doomed.id}`, { headers: doomed.owner.jwt })).status).toBe(202);
    await eventually(async () => (await app.request("GET", `/v1/organizations/${doomed.id}`, { headers: doomed.owner.jwt })).status === 404, 15_000);
    expect(await vecsyncTables()).not.toContain(name);
  });
});
