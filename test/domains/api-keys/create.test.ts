import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { addMember, bearer, newOrganization, readOnlyKey, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

describe("happy", () => {
  test("201 {key, api_key}; full by default; the new key works and acts for its creator", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const res = await app.request("POST", "/v1/api-keys", { headers: member.key, body: { name: "ci" } });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.key).toMatch(/^vsk_[0-9A-Za-z]{40}$/);
    expect(body.api_key).toEqual({
      id: expect.any(String),
      org_id: org.id,
      name: "ci",
      key_prefix: body.key.slice(0, 12),
      permission: "full",
      created_by: member.user.userId,
      created_at: expect.any(String),
      revoked_at: null,
    });
    const list = await json(await app.request("GET", "/v1/api-keys", { headers: bearer(body.key) }));
    expect(list.data.map((k: { name: string }) => k.name)).toEqual(["default", "ci"]); // a member's own keys
  });

  test("a read_only key can read but not write", async () => {
    const org = await newOrganization(app);
    const ro = await readOnlyKey(app, org.owner);
    expect((await app.request("GET", "/v1/api-keys", { headers: ro })).status).toBe(200);
    const res = await app.request("POST", "/v1/api-keys", { headers: ro, body: { name: "escalate" } });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
  });
});

describe("errors", () => {
  test.each([
    ["missing name", {}],
    ["empty name", { name: "" }],
    ["name over 100", { name: "k".repeat(101) }],
    ["unknown permission", { name: "k", permission: "admin" }],
  ])("400 validation_error: %s", async (_, body) => {
    const org = await newOrganization(app);
    const res = await app.request("POST", "/v1/api-keys", { headers: org.owner.key, body });
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });
});

describe("authz", () => {
  test("401 with a JWT, with a malformed key, and with a key whose checksum is wrong", async () => {
    const org = await newOrganization(app);
    for (const headers of [org.owner.jwt, bearer("vsk_short"), bearer(org.owner.apiKey.slice(0, -1) + (org.owner.apiKey.endsWith("A") ? "B" : "A"))]) {
      const res = await app.request("POST", "/v1/api-keys", { headers, body: { name: "x" } });
      expect(res.status).toBe(401);
    }
  });
});
