// Tenancy fixtures for tests that need an organization, its members and their keys, made through
// the public endpoints (so they exercise the same paths a client does).
import { expect } from "bun:test";
import type { TestApp } from "../harness.ts";
import { signInDirect, type TestUser } from "./identity.ts";

export type Bearer = { authorization: string };
export type OrgMember = { user: TestUser; jwt: Bearer; apiKey: string; key: Bearer; role: "owner" | "admin" | "member" };
export type TestOrg = { id: string; name: string; owner: OrgMember };

/** A response's JSON body, loosely typed: tests assert on its values. */
export const json = (res: Response): Promise<any> => res.json();

export const bearer = (token: string): Bearer => ({ authorization: `Bearer ${token}` });

let counter = 0;
const unique = (stem: string) => `${stem}-${process.pid}-${++counter}`;

/** Signs a user in and creates an organization they own, with its first key. */
export async function newOrganization(app: TestApp, opts: { email?: string; name?: string } = {}): Promise<TestOrg> {
  const user = await signInDirect(app.services, opts.email ?? `${unique("owner")}@example.com`);
  const name = opts.name ?? unique("org");
  const res = await app.request("POST", "/v1/organizations", { headers: user.auth, body: { name } });
  expect(res.status).toBe(201);
  const body = await json(res);
  return { id: body.organization.id, name, owner: { user, jwt: user.auth, apiKey: body.api_key, key: bearer(body.api_key), role: "owner" } };
}

/** Invites a new user with `role` and has them accept; they get their first key. */
export async function addMember(app: TestApp, org: TestOrg, role: "admin" | "member", email = `${unique(role)}@example.com`): Promise<OrgMember> {
  const user = await signInDirect(app.services, email);
  const invited = await app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt, body: { email, role } });
  expect(invited.status).toBe(201);
  const { token } = await json(invited);
  const accepted = await app.request("POST", `/v1/organizations/invitations/${token}/accept`, { headers: user.auth });
  expect(accepted.status).toBe(201);
  const member = await json(accepted);
  return { user, jwt: user.auth, apiKey: member.api_key, key: bearer(member.api_key), role };
}

/** A read-only key made by `member`. */
export async function readOnlyKey(app: TestApp, member: OrgMember): Promise<Bearer> {
  const res = await app.request("POST", "/v1/api-keys", { headers: member.key, body: { name: "ro", permission: "read_only" } });
  expect(res.status).toBe(201);
  return bearer((await json(res)).key);
}
