// The service as src/wiring.ts builds it: every task kind bound, every periodic job scheduled,
// every "in use" rule and every organization cleaner present. Nothing registers itself at import,
// so these hold however few modules a test imports.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { deleteOrganizationData } from "../../src/domains/organizations/deletion.ts";
import { BACKFILL, ORG_DELETION, REBACKFILL } from "../../src/domains/tasks/kinds.ts";
import type { TaskKind } from "../../src/scheduler/types.ts";
import type { TestApp, ThrowawayDatabase } from "../harness.ts";
import { json, newOrganization, type TestOrg } from "../helpers/organizations.ts";
import { localProvider, newTable, sourceConnection, tableBody, useTableWorld } from "../domains/vector-tables/helpers.ts";

// Creates a Postgres database: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let app: TestApp;
let pg: ThrowawayDatabase;
let org: TestOrg;
useTableWorld({}, (w) => ({ app, pg, org } = w));

const count = async (table: string, orgId: string) =>
  Number((await app.services.database.client.execute({ sql: `SELECT count(*) AS n FROM ${table} WHERE org_id = ?`, args: [orgId] })).rows[0]!.n);

/** An environment holding a provider, a connection and a vector table that uses both. */
async function occupiedEnvironment(owner: TestOrg["owner"]) {
  const env = await json(await app.request("POST", "/v1/environments", { headers: owner.key, body: { name: `full-${crypto.randomUUID().slice(0, 8)}` } }));
  const g = { connectionId: await sourceConnection(app, owner.key, pg, { environmentId: env.id }), providerId: await localProvider(app, owner.key, { environmentId: env.id }) };
  const table = await newTable(app, owner.key, tableBody(g), env.id);
  return { environmentId: env.id as string, ...g, table };
}

describe("happy", () => {
  test("every task kind has its handler and every periodic job is scheduled", () => {
    const kinds: TaskKind[] = [BACKFILL, REBACKFILL, ORG_DELETION];
    for (const kind of kinds) {
      expect(() => app.services.tasks.register(kind, { timeoutMs: 1_000, handler: async () => {} })).toThrow("already registered");
    }
    for (const job of ["sync-pass", "sync-consumers", "orphan-generations", "auth-cleanup"]) {
      expect(() => app.services.tasks.every(job, "0 0 1 1 *", () => {})).toThrow("already registered");
    }
  });

  test("an environment with a provider, a connection and a vector table answers 409 naming all three", async () => {
    const { environmentId } = await occupiedEnvironment(org.owner);
    const res = await app.request("DELETE", `/v1/environments/${environmentId}`, { headers: org.owner.key });
    expect(res.status).toBe(409);
    expect((await json(res)).error).toEqual({
      code: "in_use",
      message: "The environment still has embedding providers and connections and vector tables attached; delete them first",
      details: { attached: ["embedding providers", "connections", "vector tables"] },
    });
  });

  test("a connection and a provider used by a vector table answer 409 naming vector tables", async () => {
    const { connectionId, providerId } = await occupiedEnvironment(org.owner);
    const conn = await json(await app.request("DELETE", `/v1/connections/${connectionId}`, { headers: org.owner.key }));
    expect(conn.error).toEqual({ code: "in_use", message: "The connection is still used by vector tables; delete them first", details: { used_by: ["vector tables"] } });
    const provider = await json(await app.request("DELETE", `/v1/embedding-providers/${providerId}`, { headers: org.owner.key }));
    expect(provider.error).toEqual({ code: "in_use", message: "The embedding provider is used by vector tables; delete or change them first", details: { used_by: ["vector tables"] } });
  });

  test("deleting an organization removes its providers, connections and vector tables with their collections", async () => {
    expect(app.services.dependents.organization.map((c) => c.name)).toEqual(["embedding-providers", "connections", "vector-tables"]);
    const doomed = await newOrganization(app);
    const { table } = await occupiedEnvironment(doomed.owner);
    expect(app.services.vectors.hasCollection(table.vectorstore_collection)).toBe(true);
    await deleteOrganizationData(app.services, doomed.id);
    expect(app.services.vectors.hasCollection(table.vectorstore_collection)).toBe(false);
    for (const records of ["embedding_providers", "connections", "vector_tables", "environments"]) expect(await count(records, doomed.id)).toBe(0);
  });
});
