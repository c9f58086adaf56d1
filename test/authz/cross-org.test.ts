// Every route that takes an id, called with the other organization's credentials, answers 404
// (docs/api.md#errors: a foreign id is never 403) and changes nothing. New routes with a path parameter
// must be added to CASES (or EXEMPT, with the reason): the coverage test fails otherwise.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { domainRoutes } from "../../src/http/domain-routes.ts";
import { createTestApp, type TestApp } from "../harness.ts";
import { buildWorld, routeKey, type Tenant, type World } from "./world.ts";
import { json } from "../helpers/organizations.ts";

type Call = { method: string; path: string; body?: unknown; headers?: Record<string, string> };
/** `victim` owns the ids, `intruder` sends the credentials. */
type CrossOrgCase = { route: string; name: string; as: "owner-jwt" | "owner-key"; call(victim: Tenant, intruder: Tenant): Call };

const CASES: CrossOrgCase[] = [
  { route: "GET /v1/organizations/:org_id", name: "read the org", as: "owner-jwt", call: (v) => ({ method: "GET", path: `/v1/organizations/${v.id}` }) },
  { route: "DELETE /v1/organizations/:org_id", name: "delete the org", as: "owner-jwt", call: (v) => ({ method: "DELETE", path: `/v1/organizations/${v.id}` }) },
  { route: "GET /v1/organizations/:org_id/members", name: "list members", as: "owner-jwt", call: (v) => ({ method: "GET", path: `/v1/organizations/${v.id}/members` }) },
  {
    route: "DELETE /v1/organizations/:org_id/members/:user_id",
    name: "remove a member of the other org",
    as: "owner-jwt",
    call: (v) => ({ method: "DELETE", path: `/v1/organizations/${v.id}/members/${v.member.user.userId}` }),
  },
  {
    route: "DELETE /v1/organizations/:org_id/members/:user_id",
    name: "remove the other org's member through one's own org",
    as: "owner-jwt",
    call: (v, i) => ({ method: "DELETE", path: `/v1/organizations/${i.id}/members/${v.member.user.userId}` }),
  },
  {
    route: "POST /v1/organizations/:org_id/api-keys",
    name: "mint oneself a key in the other org",
    as: "owner-jwt",
    call: (v) => ({ method: "POST", path: `/v1/organizations/${v.id}/api-keys`, body: { name: "intruder" } }),
  },
  { route: "POST /v1/organizations/:org_id/leave", name: "leave the other org", as: "owner-jwt", call: (v) => ({ method: "POST", path: `/v1/organizations/${v.id}/leave` }) },
  {
    route: "POST /v1/organizations/:org_id/transfer-ownership",
    name: "transfer the other org to oneself",
    as: "owner-jwt",
    call: (v, i) => ({ method: "POST", path: `/v1/organizations/${v.id}/transfer-ownership`, body: { user_id: i.owner.user.userId } }),
  },
  {
    route: "POST /v1/organizations/:org_id/transfer-ownership",
    name: "transfer one's own org to the other org's member",
    as: "owner-jwt",
    call: (v, i) => ({ method: "POST", path: `/v1/organizations/${i.id}/transfer-ownership`, body: { user_id: v.member.user.userId } }),
  },
  {
    route: "POST /v1/organizations/:org_id/invitations",
    name: "invite into the other org",
    as: "owner-jwt",
    call: (v) => ({ method: "POST", path: `/v1/organizations/${v.id}/invitations`, body: { email: "intruder-friend@example.com", role: "admin" } }),
  },
  { route: "GET /v1/organizations/:org_id/invitations", name: "list the other org's invitations", as: "owner-jwt", call: (v) => ({ method: "GET", path: `/v1/organizations/${v.id}/invitations` }) },
  { route: "DELETE /v1/api-keys/:key_id", name: "revoke the other org's key", as: "owner-key", call: (v) => ({ method: "DELETE", path: `/v1/api-keys/${v.keyId}` }) },
  { route: "GET /v1/environments/:environment_id", name: "read the other org's environment", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/environments/${v.environmentId}` }) },
  { route: "DELETE /v1/environments/:environment_id", name: "delete the other org's environment", as: "owner-key", call: (v) => ({ method: "DELETE", path: `/v1/environments/${v.environmentId}` }) },
  { route: "GET /v1/embedding-providers/:provider_id", name: "read the other org's provider", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/embedding-providers/${v.providerId}` }) },
  {
    route: "PUT /v1/embedding-providers/:provider_id",
    name: "rename the other org's provider",
    as: "owner-key",
    call: (v) => ({ method: "PUT", path: `/v1/embedding-providers/${v.providerId}`, body: { name: "hijacked" } }),
  },
  { route: "DELETE /v1/embedding-providers/:provider_id", name: "delete the other org's provider", as: "owner-key", call: (v) => ({ method: "DELETE", path: `/v1/embedding-providers/${v.providerId}` }) },
  { route: "GET /v1/embedding-providers/:provider_id/models", name: "list the other org's provider models", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/embedding-providers/${v.providerId}/models` }) },
  {
    route: "POST /v1/providers/:provider/connections",
    name: "create a connection in the other org's environment",
    as: "owner-key",
    call: (v) => ({ method: "POST", path: "/v1/providers/db_relational/connections", headers: { "x-environment-id": v.environmentId }, body: { name: "intruder", mode: "managed", credentials: { host: "127.0.0.1", database: "d", user: "u", password: "p" } } }),
  },
  { route: "GET /v1/connections/:connection_id", name: "read the other org's connection", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/connections/${v.connectionId}` }) },
  {
    route: "PUT /v1/connections/:connection_id",
    name: "repoint the other org's connection",
    as: "owner-key",
    call: (v) => ({ method: "PUT", path: `/v1/connections/${v.connectionId}`, body: { name: "hijacked", credentials: { host: "10.0.0.66", database: "d", user: "u", password: "p" } } }),
  },
  { route: "DELETE /v1/connections/:connection_id", name: "delete the other org's connection", as: "owner-key", call: (v) => ({ method: "DELETE", path: `/v1/connections/${v.connectionId}` }) },
  { route: "POST /v1/connections/:connection_id/test", name: "test the other org's connection", as: "owner-key", call: (v) => ({ method: "POST", path: `/v1/connections/${v.connectionId}/test` }) },
  { route: "GET /v1/tasks/:task_id", name: "read the other org's task", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/tasks/${v.taskId}` }) },
  {
    route: "POST /v1/vector-tables",
    name: "create a vector table in the other org's environment",
    as: "owner-key",
    call: (v) => ({ method: "POST", path: "/v1/vector-tables", headers: { "x-environment-id": v.environmentId }, body: vectorTableSample(v) }),
  },
  {
    route: "POST /v1/vector-tables",
    name: "create a vector table over the other org's connection and provider",
    as: "owner-key",
    call: (v) => ({ method: "POST", path: "/v1/vector-tables", body: vectorTableSample(v) }),
  },
  { route: "GET /v1/vector-tables/:vector_table_id", name: "read the other org's vector table", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/vector-tables/${v.vectorTableId}` }) },
  {
    route: "PUT /v1/vector-tables/:vector_table_id",
    name: "reconfigure the other org's vector table",
    as: "owner-key",
    call: (v) => ({ method: "PUT", path: `/v1/vector-tables/${v.vectorTableId}`, body: { name: "hijacked", embedding_dimensions: 32 } }),
  },
  { route: "DELETE /v1/vector-tables/:vector_table_id", name: "delete the other org's vector table", as: "owner-key", call: (v) => ({ method: "DELETE", path: `/v1/vector-tables/${v.vectorTableId}` }) },
  { route: "GET /v1/vector-tables/:vector_table_id/schema", name: "read the other org's source schema", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/vector-tables/${v.vectorTableId}/schema` }) },
  { route: "POST /v1/vector-tables/:vector_table_id/backfill", name: "backfill the other org's vector table", as: "owner-key", call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/backfill` }) },
  { route: "GET /v1/vector-tables/:vector_table_id/sync/status", name: "read the other org's sync status", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/vector-tables/${v.vectorTableId}/sync/status` }) },
  { route: "GET /v1/vector-tables/:vector_table_id/sync/history", name: "read the other org's sync history", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/vector-tables/${v.vectorTableId}/sync/history` }) },
  { route: "POST /v1/vector-tables/:vector_table_id/sync", name: "start a pass of the other org's table", as: "owner-key", call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/sync` }) },
  { route: "GET /v1/vector-tables/:vector_table_id/errors", name: "read the other org's row errors", as: "owner-key", call: (v) => ({ method: "GET", path: `/v1/vector-tables/${v.vectorTableId}/errors` }) },
  { route: "POST /v1/vector-tables/:vector_table_id/sync/pause", name: "pause the other org's sync", as: "owner-key", call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/sync/pause` }) },
  { route: "POST /v1/vector-tables/:vector_table_id/sync/resume", name: "resume the other org's sync", as: "owner-key", call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/sync/resume` }) },
  {
    route: "POST /v1/vector-tables/:vector_table_id/query",
    name: "query the other org's vector table",
    as: "owner-key",
    call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/query`, body: { query: "anything" } }),
  },
  {
    route: "POST /v1/vector-tables/:vector_table_id/query",
    name: "query the other org's vector table naming its environment",
    as: "owner-key",
    call: (v) => ({ method: "POST", path: `/v1/vector-tables/${v.vectorTableId}/query`, headers: { "x-environment-id": v.environmentId }, body: { query: "anything" } }),
  },
];

function vectorTableSample(v: Tenant) {
  return {
    name: "intruder",
    connection_id: v.connectionId,
    embedding_provider_id: v.providerId,
    source_table: "docs",
    primary_key_column: "id",
    columns: [{ name: "body", role: "embedding" }],
    embedding_model: "local-lexical-v1",
    embedding_dimensions: 16,
  };
}

/** Routes with a path parameter that is not an organization-scoped id. */
const EXEMPT: Record<string, string> = {
  "POST /v1/organizations/invitations/:token/accept": "the token is the capability; any signed-in user may accept (docs/api.md#permissions), covered in invitations.test.ts",
};

let app: TestApp;
let world: World;
beforeAll(async () => {
  app = await createTestApp();
  world = await buildWorld(app);
});
afterAll(() => app[Symbol.asyncDispose]());

const credentials = (t: Tenant, as: CrossOrgCase["as"]) => (as === "owner-jwt" ? t.owner.jwt : t.owner.key);

/** What the victim can see of its own state; it must be identical before and after the intrusions. */
async function snapshot(t: Tenant) {
  const get = async (path: string, headers: { authorization: string }) => {
    const res = await app.request("GET", path, { headers });
    return { status: res.status, body: await json(res) };
  };
  return {
    org: await get(`/v1/organizations/${t.id}`, t.owner.jwt),
    members: await get(`/v1/organizations/${t.id}/members`, t.owner.jwt),
    invitations: await get(`/v1/organizations/${t.id}/invitations`, t.owner.jwt),
    keys: await get("/v1/api-keys", t.owner.key),
    environments: await get("/v1/environments?limit=100", t.owner.key),
    providers: await get("/v1/embedding-providers?limit=100", t.owner.key),
    connections: await get("/v1/connections?limit=100", t.owner.key),
    task: await get(`/v1/tasks/${t.taskId}`, t.owner.key),
    vectorTables: await get("/v1/vector-tables?limit=100", t.owner.key),
    syncStatus: await get(`/v1/vector-tables/${t.vectorTableId}/sync/status`, t.owner.key),
    syncHistory: await get(`/v1/vector-tables/${t.vectorTableId}/sync/history`, t.owner.key),
    organizations: await get("/v1/organizations", t.owner.jwt),
    tasks: await get("/v1/tasks", t.owner.key),
  };
}

describe("authz", () => {
  test("every route with a path parameter has a cross-organization case or an exemption", () => {
    const covered = new Set(CASES.map((c) => c.route));
    const missing = domainRoutes.filter((r) => r.path.includes(":")).map(routeKey).filter((k) => !covered.has(k) && !(k in EXEMPT));
    expect(missing).toEqual([]);
    const stale = [...covered].filter((k) => !domainRoutes.some((r) => routeKey(r) === k));
    expect(stale).toEqual([]);
  });

  test("every case answers 404 not_found in both directions, and nothing changes", async () => {
    const before = { a: await snapshot(world.a), b: await snapshot(world.b) };
    for (const side of [before.a, before.b]) expect(Object.values(side).every((s) => s.status === 200)).toBe(true);
    const failures: string[] = [];
    for (const [victim, intruder] of [[world.a, world.b], [world.b, world.a]] as const) {
      for (const c of CASES) {
        const { method, path, body, headers } = c.call(victim, intruder);
        const res = await app.request(method, path, { headers: { ...credentials(intruder, c.as), ...headers }, body });
        const code = res.status === 204 ? null : (await json(res)).error?.code;
        if (res.status !== 404 || code !== "not_found") failures.push(`${c.route} (${c.name}): ${res.status} ${code}`);
      }
    }
    expect(failures).toEqual([]);
    expect({ a: await snapshot(world.a), b: await snapshot(world.b) }).toEqual(before);
  });

  test("the list of one's organizations never shows the other organization", async () => {
    for (const [self, other] of [[world.a, world.b], [world.b, world.a]] as const) {
      for (const who of [self.owner, self.admin, self.member]) {
        const ids = (await json(await app.request("GET", "/v1/organizations", { headers: who.jwt }))).data.map((o: { id: string }) => o.id);
        expect(ids).toEqual([self.id]);
        expect(ids).not.toContain(other.id);
      }
    }
  });

  test("tRPC procedures are scoped the same way", async () => {
    const { a, b } = world;
    const rpc = async (name: string, input: unknown, headers: { authorization: string }, kind: "query" | "mutation") => {
      const res =
        kind === "query"
          ? await app.request("GET", `/trpc/${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers })
          : await app.request("POST", `/trpc/${name}`, { headers, body: input });
      return { status: res.status, code: (await json(res)).error?.data?.vecsync?.code };
    };
    const calls = [
      await rpc("organizations.get", { org_id: a.id }, b.owner.jwt, "query"),
      await rpc("organizations.members", { org_id: a.id }, b.owner.jwt, "query"),
      await rpc("organizations.removeMember", { org_id: a.id, user_id: a.member.user.userId }, b.owner.jwt, "mutation"),
      await rpc("organizations.invitations", { org_id: a.id }, b.owner.jwt, "query"),
      await rpc("apiKeys.revoke", { key_id: a.keyId }, b.owner.key, "mutation"),
      await rpc("environments.get", { environment_id: a.environmentId }, b.owner.key, "query"),
      await rpc("environments.delete", { environment_id: a.environmentId }, b.owner.key, "mutation"),
      await rpc("embeddingProviders.get", { provider_id: a.providerId }, b.owner.key, "query"),
      await rpc("embeddingProviders.models", { provider_id: a.providerId }, b.owner.key, "query"),
      await rpc("embeddingProviders.update", { provider_id: a.providerId, name: "hijacked" }, b.owner.key, "mutation"),
      await rpc("embeddingProviders.delete", { provider_id: a.providerId }, b.owner.key, "mutation"),
      await rpc("connections.get", { connection_id: a.connectionId }, b.owner.key, "query"),
      await rpc("connections.update", { connection_id: a.connectionId, name: "hijacked" }, b.owner.key, "mutation"),
      await rpc("connections.delete", { connection_id: a.connectionId }, b.owner.key, "mutation"),
      await rpc("connections.test", { connection_id: a.connectionId }, b.owner.key, "mutation"),
      await rpc("connections.create", { provider: "db_relational", environment_id: a.environmentId, name: "intruder", mode: "managed", credentials: { host: "127.0.0.1", database: "d", user: "u", password: "p" } }, b.owner.key, "mutation"),
      await rpc("vectorTables.get", { vector_table_id: a.vectorTableId }, b.owner.key, "query"),
      await rpc("vectorTables.schema", { vector_table_id: a.vectorTableId }, b.owner.key, "query"),
      await rpc("vectorTables.syncStatus", { vector_table_id: a.vectorTableId }, b.owner.key, "query"),
      await rpc("vectorTables.update", { vector_table_id: a.vectorTableId, name: "hijacked" }, b.owner.key, "mutation"),
      await rpc("vectorTables.delete", { vector_table_id: a.vectorTableId }, b.owner.key, "mutation"),
      await rpc("vectorTables.backfill", { vector_table_id: a.vectorTableId }, b.owner.key, "mutation"),
      await rpc("vectorTables.pause", { vector_table_id: a.vectorTableId }, b.owner.key, "mutation"),
      await rpc("vectorTables.resume", { vector_table_id: a.vectorTableId }, b.owner.key, "mutation"),
      await rpc("sync.history", { vector_table_id: a.vectorTableId }, b.owner.key, "query"),
      await rpc("sync.start", { vector_table_id: a.vectorTableId }, b.owner.key, "mutation"),
      await rpc("organizations.createApiKey", { org_id: a.id, name: "intruder" }, b.owner.jwt, "mutation"),
      await rpc("vectorTables.create", { ...vectorTableSample(a), environment_id: a.environmentId }, b.owner.key, "mutation"),
      await rpc("query.search", { vector_table_id: a.vectorTableId, query: "anything" }, b.owner.key, "mutation"),
    ];
    expect(calls).toEqual(calls.map(() => ({ status: 404, code: "not_found" })));
  });
});
