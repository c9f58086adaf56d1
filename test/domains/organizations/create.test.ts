import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { bearer, newOrganization, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

describe("happy", () => {
  test("201 with the organization and a raw key; the caller owns it", async () => {
    const user = await signInDirect(app.services, "founder@example.com");
    const res = await app.request("POST", "/v1/organizations", { headers: user.auth, body: { name: "Acme Corp" } });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.organization).toEqual({ id: expect.stringMatching(/^[0-9a-z]{26}$/), name: "Acme Corp", status: "active", tier: "free", created_at: expect.any(String) });
    expect(body.api_key).toMatch(/^vsk_[0-9A-Za-z]{40}$/);

    const members = await json(await app.request("GET", `/v1/organizations/${body.organization.id}/members`, { headers: user.auth }));
    expect(members.data).toEqual([
      { id: expect.any(String), user_id: user.userId, org_id: body.organization.id, role: "owner", user_email: "founder@example.com", user_name: "founder", created_at: body.organization.created_at },
    ]);
  });

  test("the prod environment and a full key named default exist, and the key authenticates", async () => {
    const org = await newOrganization(app);
    const envs = await json(await app.request("GET", "/v1/environments", { headers: org.owner.key }));
    expect(envs.data.map((e: { name: string }) => e.name)).toEqual(["prod"]);
    const keys = await json(await app.request("GET", "/v1/api-keys", { headers: org.owner.key }));
    expect(keys.data).toHaveLength(1);
    expect(keys.data[0]).toMatchObject({ name: "default", permission: "full", created_by: org.owner.user.userId, org_id: org.id, revoked_at: null, key_prefix: org.owner.apiKey.slice(0, 12) });
  });

  test("the raw key is not stored anywhere in the database", async () => {
    const org = await newOrganization(app);
    const rows = await app.services.database.client.execute("SELECT * FROM api_keys");
    expect(JSON.stringify(rows.rows)).not.toContain(org.owner.apiKey);
  });
});

describe("errors", () => {
  test("409 name_taken when the name is used by any organization", async () => {
    const first = await newOrganization(app, { name: "Taken Name" });
    const other = await signInDirect(app.services, "other@example.com");
    const res = await app.request("POST", "/v1/organizations", { headers: other.auth, body: { name: first.name } });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("name_taken");
  });

  test.each([
    ["missing name", {}],
    ["empty name", { name: "" }],
    ["blank name", { name: "   " }],
    ["name over 100 characters", { name: "x".repeat(101) }],
    ["unknown field", { name: "ok", extra: 1 }],
  ])("400 validation_error: %s", async (_, body) => {
    const user = await signInDirect(app.services, "validation@example.com");
    const res = await app.request("POST", "/v1/organizations", { headers: user.auth, body });
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });

  test("a 100-character name is accepted", async () => {
    const user = await signInDirect(app.services, "long@example.com");
    const res = await app.request("POST", "/v1/organizations", { headers: user.auth, body: { name: "n".repeat(100) } });
    expect(res.status).toBe(201);
  });
});

describe("authz", () => {
  test("401 without credentials and with an API key", async () => {
    const org = await newOrganization(app);
    expect((await app.request("POST", "/v1/organizations", { body: { name: "nokey" } })).status).toBe(401);
    const res = await app.request("POST", "/v1/organizations", { headers: bearer(org.owner.apiKey), body: { name: "withkey" } });
    expect(res.status).toBe(401);
    expect((await json(res)).error.code).toBe("unauthorized");
  });
});
