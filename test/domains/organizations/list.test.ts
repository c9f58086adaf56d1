// GET /v1/organizations (docs/api.md#organizations): the caller's organizations, each with the
// caller's role, and nobody else's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { addMember, json, newOrganization } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const list = (headers: { authorization: string }) => app.request("GET", "/v1/organizations", { headers });

describe("happy", () => {
  test("every organization the caller belongs to, with the caller's role, oldest first", async () => {
    const own = await newOrganization(app);
    const other = await newOrganization(app);
    const user = own.owner.user;
    // The same person joins `other` as an admin (they sign in with the same e-mail).
    const joined = await addMember(app, other, "admin", user.email);
    expect(joined.user.userId).toBe(user.userId);
    const third = await newOrganization(app); // not theirs

    const res = await list(own.owner.jwt);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual({
      data: [
        { id: own.id, name: own.name, status: "active", tier: "free", created_at: expect.any(String), role: "owner" },
        { id: other.id, name: other.name, status: "active", tier: "free", created_at: expect.any(String), role: "admin" },
      ],
    });
    expect(body.data.map((o: { id: string }) => o.id)).not.toContain(third.id);
  });

  test("a member sees the organization with role `member`; a user in none gets an empty list", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    expect((await json(await list(member.jwt))).data).toEqual([expect.objectContaining({ id: org.id, role: "member" })]);
    const loner = await signInDirect(app.services, "loner@example.com");
    expect(await json(await list(loner.auth))).toEqual({ data: [] });
  });

  test("an organization being deleted is listed as `deleting`, a member who left no longer sees it", async () => {
    const org = await newOrganization(app);
    const leaver = await addMember(app, org, "member");
    expect((await app.request("POST", `/v1/organizations/${org.id}/leave`, { headers: leaver.jwt })).status).toBe(204);
    expect((await json(await list(leaver.jwt))).data).toEqual([]);
    expect((await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt })).status).toBe(202);
    expect((await json(await list(org.owner.jwt))).data).toEqual([expect.objectContaining({ id: org.id, status: "deleting", role: "owner" })]);
  });

  test("over tRPC: organizations.list", async () => {
    const org = await newOrganization(app);
    const res = await app.request("GET", "/trpc/organizations.list", { headers: org.owner.jwt });
    expect(res.status).toBe(200);
    expect((await json(res)).result.data.data).toEqual([expect.objectContaining({ id: org.id, role: "owner" })]);
  });
});

describe("authz", () => {
  test("an API key or no credential → 401", async () => {
    const org = await newOrganization(app);
    for (const headers of [org.owner.key, {}]) {
      const res = await app.request("GET", "/v1/organizations", { headers });
      expect([res.status, (await json(res)).error.code]).toEqual([401, "unauthorized"]);
    }
  });
});
