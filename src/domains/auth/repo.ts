import { and, eq, gt, gte, isNull, lt, lte, notExists, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { newId } from "../../shared/ids.ts";
import { authSessions, otpCodes, rateEvents, refreshTokens, users } from "./tables.ts";

// Named queries of the sign-in domain; the rules (limits, lifetimes, reuse) live in the service.

const userRow = (email: string, now: Date) => ({
  id: newId(),
  email,
  name: email.slice(0, email.indexOf("@")), // docs/api.md#sign-in: user_name defaults to the local part
  createdAt: now.toISOString(),
});

/** Creates the user on first sight; a no-op for a known e-mail. */
export async function ensureUser(db: Db, email: string, now: Date): Promise<void> {
  await db.insert(users).values(userRow(email, now)).onConflictDoNothing({ target: users.email });
}

/**
 * Creates the user on first sight and stores the one live code of the e-mail, voiding any previous
 * one and its failed tries; one atomic batch (one commit).
 */
export async function storeCode(db: Db, email: string, codeHash: string, expiresAt: Date, now: Date): Promise<void> {
  const code = { codeHash, expiresAt: expiresAt.toISOString(), failedAttempts: 0, createdAt: now.toISOString() };
  await db.batch([
    db.insert(users).values(userRow(email, now)).onConflictDoNothing({ target: users.email }),
    db.insert(otpCodes).values({ email, ...code }).onConflictDoUpdate({ target: otpCodes.email, set: code }),
  ]);
}

export async function findUserByEmail(db: Db, email: string) {
  const [row] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email));
  return row ?? null;
}

/** Removes the code only if it is still the one that was checked: true for exactly one caller. */
export async function consumeCode(db: Db, email: string, codeHash: string): Promise<boolean> {
  const gone = await db.delete(otpCodes).where(and(eq(otpCodes.email, email), eq(otpCodes.codeHash, codeHash))).returning({ email: otpCodes.email });
  return gone.length === 1;
}

/**
 * Takes one try of the e-mail's live code, atomically: the count goes up only while the code is
 * unexpired and under `maxTries`, so however many calls race, at most `maxTries` ever see the
 * code's hash (a right code uses one try too, and is consumed). Null: no live code to try.
 */
export async function claimTry(db: Db, email: string, now: Date, maxTries: number): Promise<{ codeHash: string; tries: number } | null> {
  const [row] = await db
    .update(otpCodes)
    .set({ failedAttempts: sql`${otpCodes.failedAttempts} + 1` })
    .where(and(eq(otpCodes.email, email), lt(otpCodes.failedAttempts, maxTries), gt(otpCodes.expiresAt, now.toISOString())))
    .returning({ codeHash: otpCodes.codeHash, tries: otpCodes.failedAttempts });
  return row ?? null;
}

/** Removes the e-mail's code when it can no longer be used: expired, or out of tries. */
export async function deleteDeadCode(db: Db, email: string, now: Date, maxTries: number): Promise<void> {
  await db.delete(otpCodes).where(and(eq(otpCodes.email, email), or(lte(otpCodes.expiresAt, now.toISOString()), gte(otpCodes.failedAttempts, maxTries))));
}

export async function deleteCode(db: Db, email: string, codeHash: string): Promise<void> {
  await db.delete(otpCodes).where(and(eq(otpCodes.email, email), eq(otpCodes.codeHash, codeHash)));
}

/** A new sign-in session with its first refresh token, in one atomic batch. */
export async function createSession(db: Db, s: { sessionId: string; userId: string; tokenHash: string; expiresAt: Date; now: Date }): Promise<void> {
  const now = s.now.toISOString();
  await db.batch([
    db.insert(authSessions).values({ id: s.sessionId, userId: s.userId, createdAt: now }),
    db.insert(refreshTokens).values({ id: newId(), sessionId: s.sessionId, tokenHash: s.tokenHash, expiresAt: s.expiresAt.toISOString(), createdAt: now }),
  ]);
}

export async function addRefreshToken(db: Db, t: { sessionId: string; tokenHash: string; expiresAt: Date; now: Date }): Promise<void> {
  await db.insert(refreshTokens).values({ id: newId(), sessionId: t.sessionId, tokenHash: t.tokenHash, expiresAt: t.expiresAt.toISOString(), createdAt: t.now.toISOString() });
}

/** The refresh token with its session and user, by hash. */
export async function findRefreshToken(db: Db, tokenHash: string) {
  const [row] = await db
    .select({
      id: refreshTokens.id,
      tokenHash: refreshTokens.tokenHash,
      sessionId: refreshTokens.sessionId,
      expiresAt: refreshTokens.expiresAt,
      rotatedAt: refreshTokens.rotatedAt,
      sessionRevokedAt: authSessions.revokedAt,
      userId: users.id,
      email: users.email,
    })
    .from(refreshTokens)
    .innerJoin(authSessions, eq(authSessions.id, refreshTokens.sessionId))
    .innerJoin(users, eq(users.id, authSessions.userId))
    .where(eq(refreshTokens.tokenHash, tokenHash));
  return row ?? null;
}

/** Marks the token used; true for exactly one caller, so two racing refreshes cannot both rotate. */
export async function markRotated(db: Db, id: string, now: Date): Promise<boolean> {
  const done = await db.update(refreshTokens).set({ rotatedAt: now.toISOString() }).where(and(eq(refreshTokens.id, id), isNull(refreshTokens.rotatedAt))).returning({ id: refreshTokens.id });
  return done.length === 1;
}

/** Ends a sign-in: the session (and so its access tokens) and every refresh token of it. */
export async function revokeSession(db: Db, sessionId: string, now: Date): Promise<void> {
  const at = now.toISOString();
  await db.batch([
    db.update(authSessions).set({ revokedAt: at }).where(and(eq(authSessions.id, sessionId), isNull(authSessions.revokedAt))),
    db.update(refreshTokens).set({ rotatedAt: at }).where(and(eq(refreshTokens.sessionId, sessionId), isNull(refreshTokens.rotatedAt))),
  ]);
}

/** Clean-up: rows whose lifetime has passed. Returns how many rows of each kind went. */
export async function deleteExpired(db: Db, now: Date, rateEventsBefore: Date, sessionsBefore: Date) {
  const at = now.toISOString();
  const codes = await db.delete(otpCodes).where(lt(otpCodes.expiresAt, at));
  const tokens = await db.delete(refreshTokens).where(lt(refreshTokens.expiresAt, at));
  const events = await db.delete(rateEvents).where(lt(rateEvents.at, rateEventsBefore.toISOString()));
  // A session with no refresh token left and older than any token's lifetime can never be used again.
  const liveToken = db.select({ one: sql`1` }).from(refreshTokens).where(eq(refreshTokens.sessionId, authSessions.id));
  const sessions = await db.delete(authSessions).where(and(lt(authSessions.createdAt, sessionsBefore.toISOString()), notExists(liveToken)));
  return { otp_codes: codes.rowsAffected, refresh_tokens: tokens.rowsAffected, rate_events: events.rowsAffected, auth_sessions: sessions.rowsAffected };
}
