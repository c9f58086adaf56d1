// POST /v1/organizations/{org_id}/api-keys (docs/api.md#organizations): a signed-in member of any
// role mints a key for themselves, answered exactly as POST /v1/api-keys answers — the way back
// for a member who lost every key. Non-members get 404.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_LIVE_KEYS_PER_MEMBER } from "../../../src/domains/api-keys/service.ts";
import { createTestApp, eventually, type TestApp } from "../../harness.ts";
import { outbox } from "../auth/helpers.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { addMember, bearer, json, newOrganization } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const mint = (orgId: string, headers: Record<string, string>, body: unknown = { name: "recovered" }) =>
  app.request("POST", `/v1/organizations/${orgId}/api-keys`, { headers, body });

describe("happy", () => {
  test.each([["owner"], ["admin"], ["member"]] as const)("a %s gets a working key, answered as POST /v1/api-keys answers", async (role) => {
    const org = await newOrganization(app);
    const who = role === "owner" ? org.owner : await addMember(app, org, role);
    const res = await mint(org.id, who.jwt);
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(["api_key", "key"]);
    expect(body.key).toMatch(/^vsk_[0-9A-Za-z]{40}$/);
    expect(body.api_key).toEqual({
      id: expect.any(String), org_id: org.id, name: "recovered", key_prefix: body.key.slice(0, 12), permission: "full",
      created_by: who.user.userId, created_at: expect.any(String), revoked_at: null,
    });
    // The same shape as the key route's answer.
    const viaKey = await json(await app.request("POST", "/v1/api-keys", { headers: who.key, body: { name: "recovered" } }));
    expect(Object.keys(viaKey.api_key).sort()).toEqual(Object.keys(body.api_key).sort());
    // It works, acting for its creator with the creator's role: a member sees only their own keys.
    const listed = await app.request("GET", "/v1/api-keys", { headers: bearer(body.key) });
    expect(listed.status).toBe(200);
    const creators = new Set((await json(listed)).data.map((k: { created_by: string }) => k.created_by));
    if (role === "member") expect([...creators]).toEqual([who.user.userId]);
    expect((await app.request("POST", "/v1/environments", { headers: bearer(body.key), body: { name: `env-${role}` } })).status).toBe(201);
  });

  test("a member who revoked every key of theirs gets back in", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const mine = (await json(await app.request("GET", "/v1/api-keys", { headers: member.key }))).data as { id: string }[];
    for (const k of mine) expect((await app.request("DELETE", `/v1/api-keys/${k.id}`, { headers: member.key })).status).toBe(204);
    expect((await app.request("GET", "/v1/api-keys", { headers: member.key })).status).toBe(401);
    const res = await mint(org.id, member.jwt, { name: "back in" });
    expect(res.status).toBe(201);
    expect((await app.request("GET", "/v1/api-keys", { headers: bearer((await json(res)).key) })).status).toBe(200);
  });

  test("permission read_only: the key may read and not write", async () => {
    const org = await newOrganization(app);
    const res = await mint(org.id, org.owner.jwt, { name: "reader", permission: "read_only" });
    expect(res.status).toBe(201);
    const { key, api_key } = await json(res);
    expect(api_key.permission).toBe("read_only");
    expect((await app.request("GET", "/v1/environments", { headers: bearer(key) })).status).toBe(200);
    const write = await app.request("POST", "/v1/environments", { headers: bearer(key), body: { name: "nope" } });
    expect([write.status, (await json(write)).error.code]).toEqual([403, "insufficient_permission"]);
  });

  test("over tRPC: organizations.createApiKey", async () => {
    const org = await newOrganization(app);
    const res = await app.request("POST", "/trpc/organizations.createApiKey", { headers: org.owner.jwt, body: { org_id: org.id, name: "rpc key", permission: "read_only" } });
    expect(res.status).toBe(200);
    const { key, api_key } = (await json(res)).result.data;
    expect(api_key).toMatchObject({ org_id: org.id, name: "rpc key", permission: "read_only" });
    expect((await app.request("GET", "/v1/environments", { headers: bearer(key) })).status).toBe(200);
  });
});

describe("errors", () => {
  test.each([
    ["no name", {}],
    ["an empty name", { name: "" }],
    ["a name over 100 characters", { name: "x".repeat(101) }],
    ["an unknown permission", { name: "k", permission: "admin" }],
    ["an unknown field", { name: "k", role: "owner" }],
  ])("%s → 400 validation_error", async (_, body) => {
    const org = await newOrganization(app);
    const res = await mint(org.id, org.owner.jwt, body);
    expect([res.status, (await json(res)).error.code]).toEqual([400, "validation_error"]);
  });

  test("an organization being deleted → 409 organization_deleting, and no key is made", async () => {
    const org = await newOrganization(app);
    expect((await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt })).status).toBe(202);
    const res = await mint(org.id, org.owner.jwt);
    expect([res.status, (await json(res)).error.code]).toEqual([409, "organization_deleting"]);
    const keys = await app.services.database.client.execute({ sql: "SELECT count(*) AS n FROM api_keys WHERE org_id = ? AND revoked_at IS NULL", args: [org.id] });
    expect(keys.rows[0]!.n).toBe(0);
  });
});

describe("limits (docs/security.md#api-keys)", () => {
  test("a burst of 15 mints with one sign-in: 10 made, 5 refused with 429 and Retry-After; each made key announced by e-mail", async () => {
    const org = await newOrganization(app);
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => mint(org.id, org.owner.jwt, { name: `burst-${i}` })));
    const made = answers.filter((r) => r.status === 201);
    expect(made).toHaveLength(10);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(5);
    expect(Number(refused[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    const mails = await eventually(() => {
      const sent = outbox(app.config.mailOutbox!).filter((m) => m.to === org.owner.user.email && m.subject.startsWith("A new vecsync API key"));
      return sent.length >= 10 ? sent : null;
    });
    expect(mails).toHaveLength(10);
    expect(mails[0]!.text).toContain(org.name);
    expect(mails.map((m) => m.text).join("")).not.toMatch(/vsk_[0-9A-Za-z]{40}/); // the prefix only, never the key
  });

  test(`a member holds at most ${MAX_LIVE_KEYS_PER_MEMBER} unrevoked keys: the next → 400 on either route, and a revoke makes room`, async () => {
    const org = await newOrganization(app);
    const db = app.services.database.client;
    const now = new Date().toISOString();
    for (let i = 1; i < MAX_LIVE_KEYS_PER_MEMBER; i++) {
      await db.execute({
        sql: "INSERT INTO api_keys (id, org_id, name, key_prefix, key_hash, permission, created_by, created_at) VALUES (?, ?, ?, 'vsk_filler00', ?, 'full', ?, ?)",
        args: [`filler${i}`, org.id, `filler-${i}`, `hash-${org.id}-${i}`, org.owner.user.userId, now],
      });
    }
    const viaKey = await app.request("POST", "/v1/api-keys", { headers: org.owner.key, body: { name: "one-too-many" } });
    expect([viaKey.status, (await json(viaKey)).error.code]).toEqual([400, "validation_error"]);
    const viaSignIn = await mint(org.id, org.owner.jwt);
    expect(viaSignIn.status).toBe(400);
    expect((await app.request("DELETE", "/v1/api-keys/filler1", { headers: org.owner.key })).status).toBe(204);
    expect((await mint(org.id, org.owner.jwt)).status).toBe(201);
  });
});

describe("authz", () => {
  test("a signed-in user who is not a member, or an unknown organization → 404", async () => {
    const org = await newOrganization(app);
    const stranger = await signInDirect(app.services, "key-stranger@example.com");
    for (const res of [await mint(org.id, stranger.auth), await mint("0000000000000000000000000a", org.owner.jwt)]) {
      expect([res.status, (await json(res)).error.code]).toEqual([404, "not_found"]);
    }
    const keys = await app.services.database.client.execute({ sql: "SELECT count(*) AS n FROM api_keys WHERE org_id = ?", args: [org.id] });
    expect(keys.rows[0]!.n).toBe(1); // the owner's first key only
  });

  test("an API key or no credential → 401", async () => {
    const org = await newOrganization(app);
    for (const headers of [org.owner.key, {}]) {
      const res = await mint(org.id, headers);
      expect([res.status, (await json(res)).error.code]).toEqual([401, "unauthorized"]);
    }
  });
});
