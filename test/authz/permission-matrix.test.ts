// The permission matrix: endpoint × credential scheme × role × key permission (docs/api.md#permissions).
// The scheme and read-only rows walk every registered route, so a new route is checked at once;
// write routes need a valid sample body in WRITE_SAMPLES (validation runs before the service).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { domainRoutes } from "../../src/http/domain-routes.ts";
import type { AnyRoute } from "../../src/http/route.ts";
import { createTestApp, type TestApp } from "../harness.ts";
import type { OrgMember } from "../helpers/organizations.ts";
import { buildWorld, fillPath, routeKey, type Tenant, type World } from "./world.ts";
import { json } from "../helpers/organizations.ts";

/** A body that passes validation, for every non-GET route that takes one. */
const WRITE_SAMPLES: Record<string, unknown> = {
  "POST /v1/organizations": { name: "matrix-sample" },
  "POST /v1/organizations/:org_id/transfer-ownership": { user_id: "0000000000000000000000000a" },
  "POST /v1/organizations/:org_id/invitations": { email: "sample@example.com", role: "member" },
  "POST /v1/organizations/:org_id/api-keys": { name: "sample" },
  "POST /v1/api-keys": { name: "sample" },
  "POST /v1/environments": { name: "sample" },
  "POST /v1/embedding-providers": { name: "sample", provider: "emb_a", api_key: "sk-sample-key", default_model: "text-embedding-3-small" },
  "PUT /v1/embedding-providers/:provider_id": { name: "sample" },
  "POST /v1/providers/:provider/connections": { name: "sample", mode: "managed", credentials: { host: "127.0.0.1", database: "d", user: "u", password: "p" } },
  "PUT /v1/connections/:connection_id": { name: "sample" },
  "POST /v1/vector-tables": {
    name: "sample",
    connection_id: "0000000000000000000000000a",
    embedding_provider_id: "0000000000000000000000000a",
    source_table: "docs",
    primary_key_column: "id",
    columns: [{ name: "body", role: "embedding" }],
    embedding_model: "local-lexical-v1",
    embedding_dimensions: 16,
  },
  "PUT /v1/vector-tables/:vector_table_id": { name: "sample" },
  "POST /v1/vector-tables/:vector_table_id/query": { query: "sample" },
};

/**
 * Non-GET key routes a read_only key may still call (docs/api.md#permissions: GETs and the query endpoint):
 * those declared `readOnly`, which OpenAPI also reads (no 403 `insufficient_permission` listed).
 */
const READ_ONLY_ALLOWED = new Set<string>(domainRoutes.filter((r) => r.readOnly).map(routeKey));

/**
 * GET routes that read the source live; the world's connection points at no real database, so
 * they answer 502 source_error — past the permission check, which is what is asserted here.
 */
const READS_LIVE_SOURCE = new Set<string>(["GET /v1/vector-tables/:vector_table_id/schema"]);

let app: TestApp;
let world: World;
beforeAll(async () => {
  app = await createTestApp();
  world = await buildWorld(app);
});
afterAll(() => app[Symbol.asyncDispose]());

const call = (route: AnyRoute, headers: { authorization: string }) =>
  app.request(route.method, fillPath(route.path, world.a), { headers, body: WRITE_SAMPLES[routeKey(route)] ?? (route.method === "GET" || route.method === "DELETE" ? undefined : {}) });

async function statusAndCode(res: Response) {
  return { status: res.status, code: res.status === 204 ? null : ((await json(res)).error?.code ?? null) };
}

describe("authz: credential scheme", () => {
  test("an API key on every JWT route → 401 unauthorized", async () => {
    const routes = domainRoutes.filter((r) => r.auth === "jwt");
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect([routeKey(r), await statusAndCode(await call(r, world.a.owner.key))]).toEqual([routeKey(r), { status: 401, code: "unauthorized" }]);
  });

  test("a JWT on every API-key route → 401 unauthorized", async () => {
    const routes = domainRoutes.filter((r) => r.auth === "api_key");
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect([routeKey(r), await statusAndCode(await call(r, world.a.owner.jwt))]).toEqual([routeKey(r), { status: 401, code: "unauthorized" }]);
  });

  test("no credential on any authenticated route → 401", async () => {
    for (const r of domainRoutes.filter((r) => r.auth !== "none")) {
      const res = await app.request(r.method, fillPath(r.path, world.a), { body: WRITE_SAMPLES[routeKey(r)] });
      expect([routeKey(r), res.status]).toEqual([routeKey(r), 401]);
    }
  });
});

describe("authz: key permission", () => {
  test("every write route with a body has a sample", () => {
    const missing = domainRoutes.filter((r) => r.auth !== "none" && r.body && r.method !== "GET").map(routeKey).filter((k) => !(k in WRITE_SAMPLES));
    expect(missing).toEqual([]);
  });

  test("a read_only key on every non-GET API-key route → 403 insufficient_permission", async () => {
    const routes = domainRoutes.filter((r) => r.auth === "api_key" && r.method !== "GET" && !READ_ONLY_ALLOWED.has(routeKey(r)));
    for (const r of routes) expect([routeKey(r), await statusAndCode(await call(r, world.a.readOnly))]).toEqual([routeKey(r), { status: 403, code: "insufficient_permission" }]);
  });

  test("a read_only key on every GET API-key route is not refused for its permission", async () => {
    for (const r of domainRoutes.filter((r) => r.auth === "api_key" && r.method === "GET")) {
      const res = await call(r, world.a.readOnly);
      if (READS_LIVE_SOURCE.has(routeKey(r))) expect([routeKey(r), await statusAndCode(res)]).toEqual([routeKey(r), { status: 502, code: "source_error" }]);
      else expect([routeKey(r), res.status]).toEqual([routeKey(r), 200]);
    }
  });

  test("a read_only key may query a vector table", async () => {
    expect([...READ_ONLY_ALLOWED]).toEqual(["POST /v1/vector-tables/:vector_table_id/query"]);
    for (const key of READ_ONLY_ALLOWED) {
      const route = domainRoutes.find((r) => routeKey(r) === key)!;
      expect([key, (await call(route, world.a.readOnly)).status]).toEqual([key, 200]);
    }
  });
});

type Who = "owner" | "admin" | "member";
type RoleRule = { route: string; who: Who; expect: number; call(t: Tenant): { method: string; path: string; body?: unknown; scheme: "jwt" | "key" } };

const person = (t: Tenant, who: Who): OrgMember => (who === "owner" ? t.owner : t[who]);

// Role rules of docs/api.md#permissions. Destructive allowed cases (owner deleting the org, leaving) are in
// the domain tests; here every denial, and the allowed cases that leave the world usable.
const ROLE_RULES: RoleRule[] = [
  ...(["owner", "admin", "member"] as const).map((who) => ({ route: "GET /v1/organizations/:org_id", who, expect: 200, call: (t: Tenant) => ({ method: "GET", path: `/v1/organizations/${t.id}`, scheme: "jwt" as const }) })),
  ...(["owner", "admin", "member"] as const).map((who) => ({ route: "GET /v1/organizations/:org_id/members", who, expect: 200, call: (t: Tenant) => ({ method: "GET", path: `/v1/organizations/${t.id}/members`, scheme: "jwt" as const }) })),
  ...(["admin", "member"] as const).map((who) => ({ route: "DELETE /v1/organizations/:org_id", who, expect: 403, call: (t: Tenant) => ({ method: "DELETE", path: `/v1/organizations/${t.id}`, scheme: "jwt" as const }) })),
  { route: "DELETE /v1/organizations/:org_id/members/:user_id", who: "member", expect: 403, call: (t) => ({ method: "DELETE", path: `/v1/organizations/${t.id}/members/${t.admin.user.userId}`, scheme: "jwt" }) },
  { route: "DELETE /v1/organizations/:org_id/members/:user_id", who: "admin", expect: 403, call: (t) => ({ method: "DELETE", path: `/v1/organizations/${t.id}/members/${t.owner.user.userId}`, scheme: "jwt" }) },
  { route: "POST /v1/organizations/:org_id/leave", who: "owner", expect: 403, call: (t) => ({ method: "POST", path: `/v1/organizations/${t.id}/leave`, scheme: "jwt" }) },
  ...(["admin", "member"] as const).map((who) => ({
    route: "POST /v1/organizations/:org_id/transfer-ownership",
    who,
    expect: 403,
    call: (t: Tenant) => ({ method: "POST", path: `/v1/organizations/${t.id}/transfer-ownership`, body: { user_id: t.member.user.userId }, scheme: "jwt" as const }),
  })),
  { route: "POST /v1/organizations/:org_id/invitations", who: "member", expect: 403, call: (t) => ({ method: "POST", path: `/v1/organizations/${t.id}/invitations`, body: { email: "m@example.com", role: "member" }, scheme: "jwt" }) },
  { route: "POST /v1/organizations/:org_id/invitations", who: "admin", expect: 201, call: (t) => ({ method: "POST", path: `/v1/organizations/${t.id}/invitations`, body: { email: "a@example.com", role: "admin" }, scheme: "jwt" }) },
  { route: "GET /v1/organizations/:org_id/invitations", who: "member", expect: 403, call: (t) => ({ method: "GET", path: `/v1/organizations/${t.id}/invitations`, scheme: "jwt" }) },
  ...(["owner", "admin"] as const).map((who) => ({ route: "GET /v1/organizations/:org_id/invitations", who, expect: 200, call: (t: Tenant) => ({ method: "GET", path: `/v1/organizations/${t.id}/invitations`, scheme: "jwt" as const }) })),
  ...(["owner", "admin", "member"] as const).map((who) => ({ route: "GET /v1/organizations", who, expect: 200, call: () => ({ method: "GET", path: "/v1/organizations", scheme: "jwt" as const }) })),
  ...(["owner", "admin", "member"] as const).map((who) => ({
    route: "POST /v1/organizations/:org_id/api-keys",
    who,
    expect: 201,
    call: (t: Tenant) => ({ method: "POST", path: `/v1/organizations/${t.id}/api-keys`, body: { name: `signed-in-${who}`, permission: "read_only" }, scheme: "jwt" as const }),
  })),
  ...(["owner", "admin", "member"] as const).map((who) => ({ route: "GET /v1/api-keys", who, expect: 200, call: () => ({ method: "GET", path: "/v1/api-keys", scheme: "key" as const }) })),
  ...(["owner", "admin", "member"] as const).map((who) => ({ route: "POST /v1/api-keys", who, expect: 201, call: () => ({ method: "POST", path: "/v1/api-keys", body: { name: `by-${who}` }, scheme: "key" as const }) })),
  { route: "DELETE /v1/api-keys/:key_id", who: "member", expect: 403, call: (t) => ({ method: "DELETE", path: `/v1/api-keys/${t.ownerKeyId}`, scheme: "key" }) },
  { route: "DELETE /v1/api-keys/:key_id", who: "admin", expect: 204, call: (t) => ({ method: "DELETE", path: `/v1/api-keys/${t.keyId}`, scheme: "key" }) },
];

describe("authz: roles", () => {
  test("every route a role rule refuses lists 403 insufficient_role in its errors (and so in OpenAPI)", () => {
    const refusing = [...new Set(ROLE_RULES.filter((r) => r.expect === 403).map((r) => r.route))];
    const undocumented = refusing.filter((key) => !domainRoutes.find((r) => routeKey(r) === key)?.errors?.includes("insufficient_role"));
    expect(undocumented).toEqual([]);
  });

  test.each(ROLE_RULES.map((r) => [r.route, r.who, r.expect, r] as const))("%s as %s → %d", async (_, who, expected, rule) => {
    const t = world.a;
    const c = rule.call(t);
    const p = person(t, who);
    const res = await app.request(c.method, c.path, { headers: c.scheme === "jwt" ? p.jwt : p.key, body: c.body });
    const got = await statusAndCode(res);
    expect(got.status).toBe(expected);
    if (expected === 403) expect(got.code).toBe("insufficient_role");
  });
});
