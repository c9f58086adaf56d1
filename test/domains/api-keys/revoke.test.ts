import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { addMember, bearer, newOrganization, readOnlyKey, type OrgMember, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const mint = async (who: OrgMember, name = "extra") => (await json(await app.request("POST", "/v1/api-keys", { headers: who.key, body: { name } }))) as { key: string; api_key: { id: string } };
const revoke = (id: string, headers: { authorization: string }) => app.request("DELETE", `/v1/api-keys/${id}`, { headers });

describe("happy", () => {
  test("204; the key stops authenticating and shows revoked_at", async () => {
    const org = await newOrganization(app);
    const { key, api_key } = await mint(org.owner);
    expect((await app.request("GET", "/v1/api-keys", { headers: bearer(key) })).status).toBe(200);
    const res = await revoke(api_key.id, org.owner.key);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await app.request("GET", "/v1/api-keys", { headers: bearer(key) })).status).toBe(401);
  });

  test.each(["owner", "admin"] as const)("an %s revokes another member's key", async (role) => {
    const org = await newOrganization(app);
    const actor = role === "owner" ? org.owner : await addMember(app, org, "admin");
    const member = await addMember(app, org, "member");
    const { api_key } = await mint(member);
    expect((await revoke(api_key.id, actor.key)).status).toBe(204);
  });

  test("a member revokes their own key; revoking again is still 204 and keeps the first revoked_at", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const { api_key } = await mint(member);
    expect((await revoke(api_key.id, member.key)).status).toBe(204);
    const first = (await json(await app.request("GET", "/v1/api-keys", { headers: member.key }))).data.find((k: { id: string }) => k.id === api_key.id).revoked_at;
    expect((await revoke(api_key.id, member.key)).status).toBe(204);
    const second = (await json(await app.request("GET", "/v1/api-keys", { headers: member.key }))).data.find((k: { id: string }) => k.id === api_key.id).revoked_at;
    expect(second).toBe(first);
  });
});

describe("errors", () => {
  test("404 for an unknown key id", async () => {
    const org = await newOrganization(app);
    const res = await revoke("nosuchkey0000000000000000", org.owner.key);
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe("not_found");
  });
});

describe("authz", () => {
  test("403 insufficient_role when a member revokes another user's key", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const { api_key } = await mint(org.owner);
    const res = await revoke(api_key.id, member.key);
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_role");
  });

  test("404 for another organization's key, whatever the role", async () => {
    const a = await newOrganization(app);
    const b = await newOrganization(app);
    const { api_key } = await mint(a.owner);
    expect((await revoke(api_key.id, b.owner.key)).status).toBe(404);
  });

  test("403 insufficient_permission for a read_only key", async () => {
    const org = await newOrganization(app);
    const ro = await readOnlyKey(app, org.owner);
    const { api_key } = await mint(org.owner);
    const res = await revoke(api_key.id, ro);
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
  });
});
