import { jwtVerify, SignJWT, errors as joseErrors } from "jose";
import { newId } from "../../shared/ids.ts";

// docs/api.md#authentication: HS256, sub = user id, email, iat, exp = iat + 3600, iss = aud = "vecsync", jti.
// jose (the library under @elysiajs/jwt) is used directly because the same verification serves
// REST and tRPC, and services may not import Elysia (STYLE).
export const ACCESS_TOKEN_TTL_SEC = 3600;
const ISSUER = "vecsync";
const AUDIENCE = "vecsync";

export type AccessClaims = { userId: string; email: string; sessionId: string; jti: string; exp: number };

export async function signAccessToken(secret: string, claims: { userId: string; email: string; sessionId: string }, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ email: claims.email, sid: claims.sessionId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SEC)
    .setJti(newId())
    .sign(new TextEncoder().encode(secret));
}

/** Verifies with the algorithm pinned; returns null for any invalid, expired or foreign token. */
export async function verifyAccessToken(secret: string, token: string, now: Date): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ["HS256"],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: now,
      requiredClaims: ["sub", "exp", "iat", "jti"],
    });
    if (typeof payload.email !== "string" || typeof payload.sid !== "string") return null;
    return { userId: payload.sub!, email: payload.email, sessionId: payload.sid, jti: payload.jti!, exp: payload.exp! };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) return null;
    throw err;
  }
}
