import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { preparedOn } from "../../db/prepared.ts";
import type { Actor, Authenticator, KeyActor, UserActor } from "../../shared/actor.ts";
import type { Clock } from "../../shared/clock.ts";
import { unauthorized } from "../../shared/errors.ts";
import { apiKeys } from "../api-keys/tables.ts";
import { hashApiKey, isWellFormedApiKey, sameHash } from "../api-keys/keys.ts";
import { members, organizations } from "../organizations/tables.ts";
import { verifyAccessToken } from "./jwt.ts";
import { authSessions, users } from "./tables.ts";

// A key looks like `vsk_…`; a JWT has two dots. Presenting one where the other is required is
// a 401 (docs/api.md#authentication), so the scheme is decided by the route, never guessed from the token.

async function userFromJwt(db: Db, secret: string, token: string, now: Date): Promise<UserActor> {
  const claims = await verifyAccessToken(secret, token, now);
  if (!claims) throw unauthorized("The access token is invalid or expired");
  const statement = preparedOn(db, "userFromJwt", (d) =>
    d
      .select({ id: users.id, email: users.email, revokedAt: authSessions.revokedAt })
      .from(authSessions)
      .innerJoin(users, eq(users.id, authSessions.userId))
      .where(and(eq(authSessions.id, sql.placeholder("sessionId")), eq(authSessions.userId, sql.placeholder("userId"))))
      .prepare(),
  );
  const [row] = await statement.all({ sessionId: claims.sessionId, userId: claims.userId });
  if (!row || row.revokedAt) throw unauthorized("The access token has been revoked");
  return { kind: "user", userId: row.id, email: row.email };
}

async function actorFromApiKey(db: Db, raw: string): Promise<KeyActor> {
  if (!isWellFormedApiKey(raw)) throw unauthorized("The API key is malformed");
  const hash = hashApiKey(raw);
  // Every request with a key runs this: prepared once (db/prepared.ts).
  const statement = preparedOn(db, "actorFromApiKey", (d) =>
    d
      .select({
        keyId: apiKeys.id,
        keyHash: apiKeys.keyHash,
        orgId: apiKeys.orgId,
        userId: apiKeys.createdBy,
        permission: apiKeys.permission,
        role: members.role,
        orgStatus: organizations.status,
      })
      .from(apiKeys)
      .innerJoin(members, and(eq(members.orgId, apiKeys.orgId), eq(members.userId, apiKeys.createdBy)))
      .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
      .where(and(eq(apiKeys.keyHash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)))
      .prepare(),
  );
  const [row] = await statement.all({ hash });
  // The lookup is by hash; the constant-time comparison guards against an index that matched loosely.
  if (!row || !sameHash(row.keyHash, hash) || row.orgStatus !== "active") throw unauthorized("The API key is invalid or revoked");
  return { kind: "api_key", keyId: row.keyId, orgId: row.orgId, userId: row.userId, role: row.role, permission: row.permission };
}

/** Resolves bearer credentials: JWTs against signing key and sign-in session, keys against their hash. */
export function createAuthenticator(db: Db, jwtSecret: string, clock: Clock): Authenticator {
  return {
    async resolve(scheme, token): Promise<Actor> {
      if (scheme === "jwt") {
        if (token.startsWith("vsk_")) throw unauthorized("This endpoint takes a signed-in user's access token, not an API key");
        return userFromJwt(db, jwtSecret, token, clock.now());
      }
      if (!token.startsWith("vsk_")) throw unauthorized("This endpoint takes an API key, not an access token");
      return actorFromApiKey(db, token);
    },
  };
}
