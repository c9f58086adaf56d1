import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { addMember, newOrganization, readOnlyKey, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const owners = async (headers: { authorization: string }) =>
  ((await json(await app.request("GET", "/v1/api-keys", { headers }))).data as { created_by: string }[]).map((k) => k.created_by);

describe("happy", () => {
  test("owner and admin see every key of the organization; a member only their own", async () => {
    const org = await newOrganization(app);
    const admin = await addMember(app, org, "admin");
    const member = await addMember(app, org, "member");
    const all = [org.owner.user.userId, admin.user.userId, member.user.userId];
    expect(await owners(org.owner.key)).toEqual(all);
    expect(await owners(admin.key)).toEqual(all);
    expect(await owners(member.key)).toEqual([member.user.userId]);
  });

  test("revoked keys stay in the list with revoked_at; read_only keys may list", async () => {
    const org = await newOrganization(app);
    const created = await json(await app.request("POST", "/v1/api-keys", { headers: org.owner.key, body: { name: "temp" } }));
    await app.request("DELETE", `/v1/api-keys/${created.api_key.id}`, { headers: org.owner.key });
    const ro = await readOnlyKey(app, org.owner);
    const { data } = await json(await app.request("GET", "/v1/api-keys", { headers: ro }));
    expect(data.map((k: { name: string; revoked_at: string | null; permission: string }) => [k.name, k.permission, k.revoked_at === null])).toEqual([
      ["default", "full", true],
      ["temp", "full", false],
      ["ro", "read_only", true],
    ]);
    expect(JSON.stringify(data)).not.toContain("key_hash");
  });
});

describe("authz", () => {
  test("keys of another organization never show", async () => {
    const a = await newOrganization(app);
    const b = await newOrganization(app);
    expect(await owners(b.owner.key)).toEqual([b.owner.user.userId]);
    expect(await owners(a.owner.key)).toEqual([a.owner.user.userId]);
  });

  test("401 with a JWT", async () => {
    const org = await newOrganization(app);
    expect((await app.request("GET", "/v1/api-keys", { headers: org.owner.jwt })).status).toBe(401);
  });
});
