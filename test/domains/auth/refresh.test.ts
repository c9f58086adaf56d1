import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { errorCode, signIn, type TokenSetBody } from "./helpers.ts";

const DAY = 24 * 60 * 60_000;
const refresh = (app: TestApp, refresh_token: unknown) => app.request("POST", "/v1/auth/refresh", { body: { refresh_token } });
const sessionOf = (accessToken: string): string => JSON.parse(Buffer.from(accessToken.split(".")[1]!, "base64url").toString()).sid;

describe("happy", () => {
  test("rotates both tokens within the same sign-in session", async () => {
    await using app = await createTestApp();
    const first = await signIn(app, "rot@example.com");
    const res = await refresh(app, first.refresh_token);
    expect(res.status).toBe(200);
    const second = (await res.json()) as TokenSetBody;
    expect(second).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 3600, token_type: "bearer" });
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(sessionOf(second.access_token)).toBe(sessionOf(first.access_token));
    expect(await app.services.authenticator.resolve("jwt", second.access_token)).toMatchObject({ kind: "user", email: "rot@example.com" });
    // The new refresh token works in turn.
    expect((await refresh(app, second.refresh_token)).status).toBe(200);
  });

  test("a refresh token still works on its 29th day", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const tokens = await signIn(app, "patient@example.com");
    clock.advance(29 * DAY);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(200);
  });
});

describe("errors", () => {
  test("an unknown refresh token → 401 unauthorized", async () => {
    await using app = await createTestApp();
    const res = await refresh(app, "vsr_not-a-real-token");
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("unauthorized");
  });

  test.each([[{}], [{ refresh_token: 7 }]])("body %p → 400 validation_error", async (body) => {
    await using app = await createTestApp();
    const res = await app.request("POST", "/v1/auth/refresh", { body });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("validation_error");
  });

  test("a refresh token older than 30 days → 401", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const tokens = await signIn(app, "old@example.com");
    clock.advance(30 * DAY);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(401);
  });

  test("presenting a rotated refresh token revokes the whole sign-in", async () => {
    await using app = await createTestApp();
    const first = await signIn(app, "victim@example.com");
    const second = (await (await refresh(app, first.refresh_token)).json()) as TokenSetBody;
    const reuse = await refresh(app, first.refresh_token);
    expect(reuse.status).toBe(401);
    expect(await errorCode(reuse)).toBe("unauthorized");
    // Every token of that sign-in is now dead: the latest refresh token and both access tokens.
    expect((await refresh(app, second.refresh_token)).status).toBe(401);
    for (const token of [first.access_token, second.access_token]) {
      await expect(app.services.authenticator.resolve("jwt", token)).rejects.toMatchObject({ code: "unauthorized" });
    }
  });

  test("reuse revokes only that sign-in, not the user's other sessions", async () => {
    await using app = await createTestApp();
    const laptop = await signIn(app, "two@example.com");
    const phone = await signIn(app, "two@example.com");
    await refresh(app, laptop.refresh_token);
    await refresh(app, laptop.refresh_token);
    expect((await refresh(app, phone.refresh_token)).status).toBe(200);
    expect(await app.services.authenticator.resolve("jwt", phone.access_token)).toMatchObject({ email: "two@example.com" });
  });

  test("two refreshes racing with one token: one wins, the sign-in is then revoked", async () => {
    await using app = await createTestApp();
    const tokens = await signIn(app, "race@example.com");
    const answers = await Promise.all([refresh(app, tokens.refresh_token), refresh(app, tokens.refresh_token)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = (await answers.find((r) => r.status === 200)!.json()) as TokenSetBody;
    expect((await refresh(app, winner.refresh_token)).status).toBe(401);
  });
});
