import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { authSessions, otpCodes, refreshTokens, users } from "../../../src/domains/auth/tables.ts";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { errorCode, requestCode, type TokenSetBody } from "./helpers.ts";

const MINUTE = 60_000;
const verify = (app: TestApp, email: unknown, code: unknown) => app.request("POST", "/v1/auth/verify", { body: { email, code } });
/** A 6-digit code that is certainly not `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("happy", () => {
  test("the mailed code yields a token set whose access token authenticates the user", async () => {
    await using app = await createTestApp();
    const code = await requestCode(app, "Grace@Example.com");
    const res = await verify(app, "grace@example.com", code);
    expect(res.status).toBe(200);
    const body = (await res.json()) as TokenSetBody;
    expect(body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 3600, token_type: "bearer" });
    const [user] = await app.services.database.db.select().from(users).where(eq(users.email, "grace@example.com"));
    const actor = await app.services.authenticator.resolve("jwt", body.access_token);
    expect(actor).toEqual({ kind: "user", userId: user!.id, email: "grace@example.com" });
    const claims = JSON.parse(Buffer.from(body.access_token.split(".")[1]!, "base64url").toString());
    expect(claims).toMatchObject({ sub: user!.id, email: "grace@example.com", iss: "vecsync", aud: "vecsync", jti: expect.any(String) });
    expect(claims.exp - claims.iat).toBe(3600);
    const sessions = await app.services.database.db.select().from(authSessions).where(eq(authSessions.userId, user!.id));
    expect(sessions.map((s) => s.id)).toEqual([claims.sid]);
  });

  test("refresh tokens are stored only as a hash", async () => {
    await using app = await createTestApp();
    const code = await requestCode(app, "hash@example.com");
    const body = (await (await verify(app, "hash@example.com", code)).json()) as TokenSetBody;
    const rows = await app.services.database.db.select().from(refreshTokens);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(body.refresh_token);
    const [stored] = await app.services.database.db.select().from(otpCodes);
    expect(stored).toBeUndefined(); // used up
  });

  test("the code still works just before its 10 minutes are up", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const code = await requestCode(app, "late@example.com");
    clock.advance(10 * MINUTE - 1);
    expect((await verify(app, "late@example.com", code)).status).toBe(200);
  });

  test("four wrong tries leave the code usable", async () => {
    await using app = await createTestApp();
    const code = await requestCode(app, "clumsy@example.com");
    for (let i = 0; i < 4; i++) expect((await verify(app, "clumsy@example.com", wrong(code))).status).toBe(401);
    expect((await verify(app, "clumsy@example.com", code)).status).toBe(200);
  });
});

describe("errors", () => {
  test.each([["not-an-email", "123456"], ["x@y", "123456"], ["a@example.com", "12345"], ["a@example.com", "123456789"], ["a@example.com", "12a456"], ["a@example.com", " 123456"]])(
    "malformed e-mail or code (%p, %p) → 400 invalid_request",
    async (email, code) => {
      await using app = await createTestApp();
      const res = await verify(app, email, code);
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("invalid_request");
    },
  );

  test.each([[{ email: "a@example.com" }], [{ email: "a@example.com", code: 123456 }], [{ code: "123456" }]])("body %p → 400 validation_error", async (body) => {
    await using app = await createTestApp();
    const res = await app.request("POST", "/v1/auth/verify", { body });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("validation_error");
  });

  test("a wrong code, an unknown e-mail and a used code → 401 unauthorized", async () => {
    await using app = await createTestApp();
    const code = await requestCode(app, "eve@example.com");
    const wrongRes = await verify(app, "eve@example.com", wrong(code));
    expect(wrongRes.status).toBe(401);
    expect(await errorCode(wrongRes)).toBe("unauthorized");
    expect((await verify(app, "nobody@example.com", code)).status).toBe(401);
    expect((await verify(app, "eve@example.com", code)).status).toBe(200);
    expect((await verify(app, "eve@example.com", code)).status).toBe(401);
  });

  test("an 8-digit code is well-formed but wrong → 401", async () => {
    await using app = await createTestApp();
    await requestCode(app, "long@example.com");
    expect((await verify(app, "long@example.com", "12345678")).status).toBe(401);
  });

  test("a code older than 10 minutes → 401", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const code = await requestCode(app, "slow@example.com");
    clock.advance(10 * MINUTE);
    expect((await verify(app, "slow@example.com", code)).status).toBe(401);
  });

  test("a new code voids the previous one", async () => {
    await using app = await createTestApp();
    const first = await requestCode(app, "twice@example.com");
    let second = await requestCode(app, "twice@example.com");
    while (second === first) second = await requestCode(app, "twice@example.com"); // 1 in a million
    expect((await verify(app, "twice@example.com", first)).status).toBe(401);
    expect((await verify(app, "twice@example.com", second)).status).toBe(200);
  });

  test("the fifth wrong try voids the code", async () => {
    await using app = await createTestApp();
    const code = await requestCode(app, "guesser@example.com");
    for (let i = 0; i < 5; i++) expect((await verify(app, "guesser@example.com", wrong(code))).status).toBe(401);
    expect((await verify(app, "guesser@example.com", code)).status).toBe(401);
  });

  test("30 wrong tries per e-mail per day, across new codes → 429 with Retry-After, even for the right code", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const email = "brute@example.com";
    for (let round = 0; round < 6; round++) {
      const code = await requestCode(app, email);
      for (let i = 0; i < 5; i++) expect((await verify(app, email, wrong(code))).status).toBe(401);
      clock.advance(15 * MINUTE); // past the otp request limit
    }
    const code = await requestCode(app, email);
    const refused = await verify(app, email, code);
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    // The first wrong try was 6 × 15 minutes ago; it leaves the day window 22.5 hours from now.
    expect(refused.headers.get("retry-after")).toBe(String(24 * 3600 - 6 * 15 * 60));
    // Another e-mail is unaffected.
    expect((await verify(app, "other@example.com", "123456")).status).toBe(401);
    clock.advance(24 * 60 * MINUTE - 6 * 15 * MINUTE);
    const fresh = await requestCode(app, email);
    expect((await verify(app, email, fresh)).status).toBe(200);
  });
});
