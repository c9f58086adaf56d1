import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { addMember, newOrganization, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

describe("happy", () => {
  test("any member reads the organization", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    for (const who of [org.owner, member]) {
      const res = await app.request("GET", `/v1/organizations/${org.id}`, { headers: who.jwt });
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ id: org.id, name: org.name, status: "active", tier: "free", created_at: expect.any(String) });
    }
  });
});

describe("errors", () => {
  test("404 for an unknown id", async () => {
    const user = await signInDirect(app.services, "nobody@example.com");
    const res = await app.request("GET", "/v1/organizations/doesnotexist0000000000000", { headers: user.auth });
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe("not_found");
  });
});

describe("authz", () => {
  test("404, not 403, for a signed-in user who is not a member", async () => {
    const org = await newOrganization(app);
    const stranger = await signInDirect(app.services, "stranger@example.com");
    const res = await app.request("GET", `/v1/organizations/${org.id}`, { headers: stranger.auth });
    expect(res.status).toBe(404);
  });

  test("401 with an API key", async () => {
    const org = await newOrganization(app);
    expect((await app.request("GET", `/v1/organizations/${org.id}`, { headers: org.owner.key })).status).toBe(401);
  });
});
