import { createHash, randomBytes } from "node:crypto";
import type { Services } from "../../services.ts";
import { AppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { ACCESS_TOKEN_TTL_SEC, signAccessToken } from "./jwt.ts";
import * as repo from "./repo.ts";
import type { TokenSet } from "./schemas.ts";

// docs/api.md#sign-in: refresh tokens are opaque, stored as SHA-256, live 30 days and rotate on every use;
// presenting a rotated one means it leaked (or raced), so the whole sign-in is revoked.
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const REFRESH_PREFIX = "vsr_"; // lets secret scanners recognise a leaked token

const hashRefreshToken = (raw: string): string => createHash("sha256").update(raw).digest("hex");
const newRefreshToken = (): string => REFRESH_PREFIX + randomBytes(32).toString("base64url");

const invalidRefresh = () => new AppError("unauthorized", "The refresh token is invalid or expired");

async function tokenSet(services: Services, user: { userId: string; email: string }, sessionId: string, refreshToken: string): Promise<TokenSet> {
  const accessToken = await signAccessToken(services.config.jwtSecret, { ...user, sessionId }, services.clock.now());
  return { access_token: accessToken, refresh_token: refreshToken, expires_in: ACCESS_TOKEN_TTL_SEC, token_type: "bearer" };
}

/** Starts a sign-in session for a user whose code was just accepted. */
export async function startSession(services: Services, user: { userId: string; email: string }): Promise<TokenSet> {
  const now = services.clock.now();
  const sessionId = newId();
  const raw = newRefreshToken();
  await repo.createSession(services.database.db, { sessionId, userId: user.userId, tokenHash: hashRefreshToken(raw), expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS), now });
  return tokenSet(services, user, sessionId, raw);
}

/** POST /v1/auth/refresh: a new access token and refresh token for the same sign-in session. */
export async function refreshSession(services: Services, rawToken: string): Promise<TokenSet> {
  const db = services.database.db;
  const now = services.clock.now();
  const token = await repo.findRefreshToken(db, hashRefreshToken(rawToken));
  if (!token || token.sessionRevokedAt) throw invalidRefresh();
  const reused = token.rotatedAt !== null;
  if (!reused && Date.parse(token.expiresAt) <= now.getTime()) throw invalidRefresh();
  // The conditional update is the gate: of two requests racing with one token, one rotates it and
  // the other counts as reuse.
  if (reused || !(await repo.markRotated(db, token.id, now))) {
    await repo.revokeSession(db, token.sessionId, now);
    services.logger.warn({ session_id: token.sessionId, user_id: token.userId }, "refresh token reused; sign-in session revoked");
    throw invalidRefresh();
  }
  const raw = newRefreshToken();
  await repo.addRefreshToken(db, { sessionId: token.sessionId, tokenHash: hashRefreshToken(raw), expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS), now });
  return tokenSet(services, { userId: token.userId, email: token.email }, token.sessionId, raw);
}
