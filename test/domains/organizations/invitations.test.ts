import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { signInDirect } from "../../helpers/identity.ts";
import { addMember, bearer, newOrganization, type TestOrg, json } from "../../helpers/organizations.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const clock = new FakeClock(Date.UTC(2026, 0, 1));
let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({ clock });
});
afterAll(() => app[Symbol.asyncDispose]());

const invite = (org: TestOrg, email: string, role = "member", headers = org.owner.jwt) =>
  app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers, body: { email, role } });
const accept = (token: string, headers: { authorization: string }) => app.request("POST", `/v1/organizations/invitations/${token}/accept`, { headers });
const outbox = () => readFileSync(app.config.mailOutbox!, "utf8").trim().split("\n").map((l) => JSON.parse(l));

describe("happy", () => {
  test("201 invitation with its token, once; expires in 7 days; the token is e-mailed", async () => {
    const org = await newOrganization(app);
    const res = await invite(org, "New.Person@example.com", "admin");
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      id: expect.any(String),
      org_id: org.id,
      email: "new.person@example.com",
      role: "admin",
      invited_by: org.owner.user.userId,
      expires_at: new Date(clock.now().getTime() + 7 * DAY_MS).toISOString(),
      accepted_at: null,
      created_at: clock.now().toISOString(),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const mail = outbox().findLast((m) => m.to === "new.person@example.com");
    expect(mail.subject).toContain(org.name);
    expect(mail.text).toContain(`/v1/organizations/invitations/${body.token}/accept`);

    const list = await json(await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt }));
    const { token: _token, ...invitation } = body;
    expect(list.data).toEqual([invitation]);
  });

  test("accept: 201 Member + a working full key; the invitation leaves the list", async () => {
    const org = await newOrganization(app);
    const { token } = await json(await invite(org, "joiner@example.com", "admin"));
    const joiner = await signInDirect(app.services, "joiner@example.com");
    const res = await accept(token, joiner.auth);
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      id: expect.any(String),
      user_id: joiner.userId,
      org_id: org.id,
      role: "admin",
      user_email: "joiner@example.com",
      user_name: "joiner",
      created_at: clock.now().toISOString(),
      api_key: expect.stringMatching(/^vsk_/),
    });
    const keys = await json(await app.request("GET", "/v1/api-keys", { headers: bearer(body.api_key) }));
    expect(keys.data.filter((k: { created_by: string }) => k.created_by === joiner.userId)).toEqual([
      expect.objectContaining({ name: "default", permission: "full", revoked_at: null }),
    ]);
    const list = await json(await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt }));
    expect(list.data).toEqual([]);
  });

  test("any signed-in user may accept: the membership binds to the caller", async () => {
    const org = await newOrganization(app);
    const { token } = await json(await invite(org, "addressed@example.com"));
    const someoneElse = await signInDirect(app.services, "forwarded@example.com");
    const body = await json(await accept(token, someoneElse.auth));
    expect(body.user_id).toBe(someoneElse.userId);
  });

  test("an expired, unaccepted invitation does not block a new one and is still listed", async () => {
    const org = await newOrganization(app);
    await invite(org, "slow@example.com");
    clock.advance(8 * DAY_MS);
    const owner = await signInDirect(app.services, org.owner.user.email); // the old access token expired
    expect((await invite(org, "slow@example.com", "member", owner.auth)).status).toBe(201);
    const list = await json(await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: owner.auth }));
    expect(list.data).toHaveLength(2);
  });
});

describe("errors", () => {
  test("409 already_member when the e-mail belongs to a member", async () => {
    const org = await newOrganization(app);
    const res = await invite(org, org.owner.user.email.toUpperCase());
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("already_member");
  });

  test("409 invitation_pending when an unexpired invitation exists", async () => {
    const org = await newOrganization(app);
    await invite(org, "twice@example.com");
    const res = await invite(org, "twice@example.com", "admin");
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("invitation_pending");
  });

  test.each([
    ["bad e-mail", { email: "not-an-email", role: "member" }],
    ["owner role", { email: "a@example.com", role: "owner" }],
    ["missing role", { email: "a@example.com" }],
  ])("400 on %s", async (_, body) => {
    const org = await newOrganization(app);
    const res = await app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt, body });
    expect(res.status).toBe(400);
  });

  test("404 for an unknown token and for a used one", async () => {
    const org = await newOrganization(app);
    const user = await signInDirect(app.services, "tokens@example.com");
    expect((await accept("no-such-token", user.auth)).status).toBe(404);
    const { token } = await json(await invite(org, "tokens@example.com"));
    expect((await accept(token, user.auth)).status).toBe(201);
    const other = await signInDirect(app.services, "tokens2@example.com");
    const again = await accept(token, other.auth);
    expect(again.status).toBe(404);
    expect((await json(again)).error.code).toBe("not_found");
  });

  test("410 invitation_expired after 7 days", async () => {
    const org = await newOrganization(app);
    const { token } = await json(await invite(org, "late@example.com"));
    clock.advance(7 * DAY_MS);
    const late = await signInDirect(app.services, "late@example.com");
    const res = await accept(token, late.auth);
    expect(res.status).toBe(410);
    expect((await json(res)).error.code).toBe("invitation_expired");
  });

  test("409 already_member when the caller is already a member; the invitation stays usable", async () => {
    const org = await newOrganization(app);
    const { token } = await json(await invite(org, "someone@example.com"));
    const res = await accept(token, org.owner.jwt);
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("already_member");
    const someone = await signInDirect(app.services, "someone@example.com");
    expect((await accept(token, someone.auth)).status).toBe(201);
  });
});

describe("authz", () => {
  test("403 for a member creating or listing invitations; an admin may do both", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const admin = await addMember(app, org, "admin");
    const denied = await invite(org, "x1@example.com", "member", member.jwt);
    expect(denied.status).toBe(403);
    expect((await json(denied)).error.code).toBe("insufficient_role");
    expect((await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: member.jwt })).status).toBe(403);
    expect((await invite(org, "x2@example.com", "admin", admin.jwt)).status).toBe(201);
    expect((await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: admin.jwt })).status).toBe(200);
  });

  test("404 for non-members; 401 for API keys and for no credentials on accept", async () => {
    const org = await newOrganization(app);
    const stranger = await signInDirect(app.services, "stranger-inv@example.com");
    expect((await invite(org, "y@example.com", "member", stranger.auth)).status).toBe(404);
    expect((await app.request("GET", `/v1/organizations/${org.id}/invitations`, { headers: stranger.auth })).status).toBe(404);
    const { token } = await json(await invite(org, "z@example.com"));
    expect((await accept(token, org.owner.key)).status).toBe(401);
    expect((await app.request("POST", `/v1/organizations/invitations/${token}/accept`)).status).toBe(401);
  });
});
