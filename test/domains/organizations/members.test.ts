import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { addMember, newOrganization, type OrgMember, type TestOrg, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const roleOf = async (org: TestOrg, userId: string) => {
  const { data } = await json(await app.request("GET", `/v1/organizations/${org.id}/members`, { headers: org.owner.jwt }));
  return data.find((m: { user_id: string }) => m.user_id === userId)?.role ?? null;
};
const keyWorks = async (m: OrgMember) => (await app.request("GET", "/v1/api-keys", { headers: m.key })).status === 200;

describe("happy", () => {
  test("any member lists members with e-mail and name", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member", "Mixed.Case@Example.com");
    const res = await app.request("GET", `/v1/organizations/${org.id}/members`, { headers: member.jwt });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data.map((m: { role: string; user_email: string; user_name: string }) => [m.role, m.user_email, m.user_name])).toEqual([
      ["owner", org.owner.user.email, org.owner.user.email.split("@")[0]],
      ["member", "mixed.case@example.com", "mixed.case"],
    ]);
  });
});

describe("happy", () => {
  test.each(["owner", "admin"] as const)("an %s removes a member (204) and the member's keys are revoked", async (remover) => {
    const org = await newOrganization(app);
    const actor = remover === "owner" ? org.owner : await addMember(app, org, "admin");
    const target = await addMember(app, org, "member");
    expect(await keyWorks(target)).toBe(true);
    const res = await app.request("DELETE", `/v1/organizations/${org.id}/members/${target.user.userId}`, { headers: actor.jwt });
    expect(res.status).toBe(204);
    expect(await roleOf(org, target.user.userId)).toBeNull();
    expect(await keyWorks(target)).toBe(false);
    const keys = await json(await app.request("GET", "/v1/api-keys", { headers: org.owner.key }));
    expect(keys.data.find((k: { created_by: string }) => k.created_by === target.user.userId).revoked_at).toEqual(expect.any(String));
  });

  test("a member leaves (204); their keys are revoked and the organization is gone for them", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "admin");
    expect((await app.request("POST", `/v1/organizations/${org.id}/leave`, { headers: member.jwt })).status).toBe(204);
    expect(await keyWorks(member)).toBe(false);
    expect((await app.request("GET", `/v1/organizations/${org.id}`, { headers: member.jwt })).status).toBe(404);
  });

  test("transfer ownership: 200 the new owner; the previous owner becomes admin", async () => {
    const org = await newOrganization(app);
    const next = await addMember(app, org, "member");
    const res = await app.request("POST", `/v1/organizations/${org.id}/transfer-ownership`, { headers: org.owner.jwt, body: { user_id: next.user.userId } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ user_id: next.user.userId, org_id: org.id, role: "owner", user_email: next.user.email });
    expect(await roleOf(org, org.owner.user.userId)).toBe("admin");
    // The new owner's key acts with the new role at once.
    const keys = await json(await app.request("GET", "/v1/api-keys", { headers: next.key }));
    expect(keys.data.length).toBe(2);
    // And the old owner may now leave.
    expect((await app.request("POST", `/v1/organizations/${org.id}/leave`, { headers: org.owner.jwt })).status).toBe(204);
  });
});

describe("errors", () => {
  test("404 removing a user who is not a member", async () => {
    const org = await newOrganization(app);
    const outsider = await signInDirect(app.services, "outsider@example.com");
    const res = await app.request("DELETE", `/v1/organizations/${org.id}/members/${outsider.userId}`, { headers: org.owner.jwt });
    expect(res.status).toBe(404);
  });

  test("404 transferring to a user who is not a member", async () => {
    const org = await newOrganization(app);
    const outsider = await signInDirect(app.services, "outsider2@example.com");
    const res = await app.request("POST", `/v1/organizations/${org.id}/transfer-ownership`, { headers: org.owner.jwt, body: { user_id: outsider.userId } });
    expect(res.status).toBe(404);
    expect(await roleOf(org, org.owner.user.userId)).toBe("owner");
  });

  test("400 transfer without user_id", async () => {
    const org = await newOrganization(app);
    const res = await app.request("POST", `/v1/organizations/${org.id}/transfer-ownership`, { headers: org.owner.jwt, body: {} });
    expect(res.status).toBe(400);
  });
});

describe("authz", () => {
  test("403 a member removing someone", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const other = await addMember(app, org, "member");
    const res = await app.request("DELETE", `/v1/organizations/${org.id}/members/${other.user.userId}`, { headers: member.jwt });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_role");
  });

  test("403 removing the owner, even by an admin", async () => {
    const org = await newOrganization(app);
    const admin = await addMember(app, org, "admin");
    const res = await app.request("DELETE", `/v1/organizations/${org.id}/members/${org.owner.user.userId}`, { headers: admin.jwt });
    expect(res.status).toBe(403);
    expect(await roleOf(org, org.owner.user.userId)).toBe("owner");
  });

  test("403 the owner leaving", async () => {
    const org = await newOrganization(app);
    const res = await app.request("POST", `/v1/organizations/${org.id}/leave`, { headers: org.owner.jwt });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_role");
  });

  test.each(["admin", "member"] as const)("403 an %s transferring ownership", async (role) => {
    const org = await newOrganization(app);
    const who = await addMember(app, org, role);
    const res = await app.request("POST", `/v1/organizations/${org.id}/transfer-ownership`, { headers: who.jwt, body: { user_id: who.user.userId } });
    expect(res.status).toBe(403);
  });

  test("404 for non-members on list, remove, leave and transfer", async () => {
    const org = await newOrganization(app);
    const stranger = await signInDirect(app.services, "stranger-members@example.com");
    const calls: [string, string, unknown?][] = [
      ["GET", `/v1/organizations/${org.id}/members`],
      ["DELETE", `/v1/organizations/${org.id}/members/${org.owner.user.userId}`],
      ["POST", `/v1/organizations/${org.id}/leave`],
      ["POST", `/v1/organizations/${org.id}/transfer-ownership`, { user_id: stranger.userId }],
    ];
    for (const [method, path, body] of calls) expect((await app.request(method, path, { headers: stranger.auth, body })).status).toBe(404);
  });
});
