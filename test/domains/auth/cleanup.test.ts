import { describe, expect, test } from "bun:test";
import { cleanupExpiredAuth } from "../../../src/domains/auth/service.ts";
import { authSessions, otpCodes, rateEvents, refreshTokens } from "../../../src/domains/auth/tables.ts";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { requestCode, signIn } from "./helpers.ts";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

async function counts(app: TestApp) {
  const db = app.services.database.db;
  return {
    otp_codes: (await db.select().from(otpCodes)).length,
    refresh_tokens: (await db.select().from(refreshTokens)).length,
    rate_events: (await db.select().from(rateEvents)).length,
    auth_sessions: (await db.select().from(authSessions)).length,
  };
}

describe("happy", () => {
  test("keeps live records", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    await signIn(app, "live@example.com");
    await requestCode(app, "pending@example.com");
    const before = await counts(app);
    expect(await cleanupExpiredAuth(app.services)).toEqual({ otp_codes: 0, refresh_tokens: 0, rate_events: 0, auth_sessions: 0 });
    expect(await counts(app)).toEqual(before);
  });

  test("removes expired codes, then rate events older than a day, then dead sessions and their tokens", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    await signIn(app, "gone@example.com"); // 1 otp event, 1 session, 1 refresh token
    await requestCode(app, "pending@example.com"); // 1 otp event, 1 code
    clock.advance(11 * MINUTE);
    expect(await cleanupExpiredAuth(app.services)).toEqual({ otp_codes: 1, refresh_tokens: 0, rate_events: 0, auth_sessions: 0 });
    clock.advance(DAY);
    expect(await cleanupExpiredAuth(app.services)).toEqual({ otp_codes: 0, refresh_tokens: 0, rate_events: 2, auth_sessions: 0 });
    clock.advance(30 * DAY);
    expect(await cleanupExpiredAuth(app.services)).toEqual({ otp_codes: 0, refresh_tokens: 1, rate_events: 0, auth_sessions: 1 });
    expect(await counts(app)).toEqual({ otp_codes: 0, refresh_tokens: 0, rate_events: 0, auth_sessions: 0 });
  });
});
