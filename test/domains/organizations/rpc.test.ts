// The same operations over tRPC: one flow through organizations, apiKeys and environments, and
// errors that keep their codes and statuses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { bearer, json, type Bearer } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

async function rpc(kind: "query" | "mutation", name: string, headers: Bearer, input?: unknown) {
  const res =
    kind === "query"
      ? await app.request("GET", `/trpc/${name}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers })
      : await app.request("POST", `/trpc/${name}`, { headers, body: input ?? {} });
  const body = await json(res);
  return { status: res.status, data: body.result?.data, code: body.error?.data?.vecsync?.code as string | undefined };
}

describe("happy", () => {
  test("create an org, invite, accept, mint keys, page environments", async () => {
    const owner = await signInDirect(app.services, "rpc-owner@example.com");
    const created = await rpc("mutation", "organizations.create", owner.auth, { name: "RPC Org" });
    expect(created.status).toBe(200);
    expect(created.data.organization).toMatchObject({ name: "RPC Org", status: "active", tier: "free" });
    const orgId = created.data.organization.id;
    const ownerKey = bearer(created.data.api_key);

    expect((await rpc("query", "organizations.get", owner.auth, { org_id: orgId })).data.id).toBe(orgId);
    const invitation = await rpc("mutation", "organizations.createInvitation", owner.auth, { org_id: orgId, email: "rpc-member@example.com", role: "member" });
    const token: string = invitation.data.token; // read before toMatchObject: bun writes asymmetric matchers into the received object
    expect(invitation.data).toMatchObject({ email: "rpc-member@example.com", role: "member", token: expect.any(String) });
    expect((await rpc("query", "organizations.invitations", owner.auth, { org_id: orgId })).data.data).toHaveLength(1);

    const member = await signInDirect(app.services, "rpc-member@example.com");
    const accepted = await rpc("mutation", "organizations.acceptInvitation", member.auth, { token });
    expect(accepted).toMatchObject({ status: 200 });
    expect(accepted.data).toMatchObject({ org_id: orgId, role: "member", user_email: "rpc-member@example.com", api_key: expect.stringMatching(/^vsk_/) });
    expect((await rpc("query", "organizations.members", member.auth, { org_id: orgId })).data.data).toHaveLength(2);

    const minted = await rpc("mutation", "apiKeys.create", ownerKey, { name: "rpc", permission: "read_only" });
    expect(minted.data.api_key).toMatchObject({ name: "rpc", permission: "read_only" });
    expect((await rpc("query", "apiKeys.list", ownerKey)).data.data).toHaveLength(3);

    for (const name of ["a", "b", "c"]) expect((await rpc("mutation", "environments.create", ownerKey, { name })).status).toBe(200);
    const first = await rpc("query", "environments.list", ownerKey, { limit: 2 });
    expect(first.data.pagination).toMatchObject({ limit: 2, has_more: true });
    const second = await rpc("query", "environments.list", ownerKey, { limit: 2, cursor: first.data.pagination.next_cursor });
    // The pages follow (created_at, id): environments made in the same millisecond come in id order, not call order.
    type Env = { id: string; name: string; created_at: string };
    const paged: Env[] = [...first.data.data, ...second.data.data];
    const byPosition = [...paged].sort((x, y) => x.created_at.localeCompare(y.created_at) || x.id.localeCompare(y.id));
    expect(paged).toEqual(byPosition);
    expect(paged.map((e) => e.name).sort()).toEqual(["a", "b", "c", "prod"]);
    expect((await rpc("query", "environments.list", ownerKey)).data.data).toHaveLength(4);
    const last = second.data.data[1] as Env;
    const envId = last.id;
    expect((await rpc("query", "environments.get", ownerKey, { environment_id: envId })).data.name).toBe(last.name);
    expect((await rpc("mutation", "environments.delete", ownerKey, { environment_id: envId })).status).toBe(200);

    expect((await rpc("mutation", "organizations.transferOwnership", owner.auth, { org_id: orgId, user_id: member.userId })).data.role).toBe("owner");
    expect((await rpc("mutation", "organizations.leave", owner.auth, { org_id: orgId })).status).toBe(200);
    const deleted = await rpc("mutation", "organizations.delete", member.auth, { org_id: orgId });
    expect(deleted.data).toMatchObject({ organization_id: orgId, status: "deleting" });
  });
});

describe("errors", () => {
  test("conflicts, validation and bad cursors keep their REST codes and statuses", async () => {
    const user = await signInDirect(app.services, "rpc-errors@example.com");
    const { data } = await rpc("mutation", "organizations.create", user.auth, { name: "RPC Errors" });
    expect(await rpc("mutation", "organizations.create", user.auth, { name: "RPC Errors" })).toMatchObject({ status: 409, code: "name_taken" });
    expect(await rpc("mutation", "organizations.create", user.auth, { name: "" })).toMatchObject({ status: 400, code: "validation_error" });
    const key = bearer(data.api_key);
    expect(await rpc("mutation", "environments.create", key, { name: "prod" })).toMatchObject({ status: 409, code: "name_taken" });
    expect(await rpc("query", "environments.list", key, { cursor: "forged" })).toMatchObject({ status: 400, code: "validation_error" });
    expect(await rpc("query", "environments.list", key, { limit: 101 })).toMatchObject({ status: 400, code: "validation_error" });
    expect(await rpc("mutation", "organizations.acceptInvitation", user.auth, { token: "nope" })).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("authz", () => {
  test("wrong scheme → 401; read_only key writes → 403; role rules → 403", async () => {
    const user = await signInDirect(app.services, "rpc-authz@example.com");
    const { data } = await rpc("mutation", "organizations.create", user.auth, { name: "RPC Authz" });
    const key = bearer(data.api_key);
    expect(await rpc("query", "organizations.get", key, { org_id: data.organization.id })).toMatchObject({ status: 401, code: "unauthorized" });
    expect(await rpc("query", "apiKeys.list", user.auth)).toMatchObject({ status: 401, code: "unauthorized" });
    const ro = bearer((await rpc("mutation", "apiKeys.create", key, { name: "ro", permission: "read_only" })).data.key);
    expect(await rpc("mutation", "environments.create", ro, { name: "x" })).toMatchObject({ status: 403, code: "insufficient_permission" });
    expect((await rpc("query", "environments.list", ro)).status).toBe(200);
    expect(await rpc("mutation", "organizations.leave", user.auth, { org_id: data.organization.id })).toMatchObject({ status: 403, code: "insufficient_role" });
  });
});
