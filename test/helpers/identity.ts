// Shortcuts for tests that need a signed-in user but are not about signing in: they write the
// same rows the sign-in flow writes and mint a real token with the service's own signer.
import { eq } from "drizzle-orm";
import { signAccessToken } from "../../src/domains/auth/jwt.ts";
import { authSessions, users } from "../../src/domains/auth/tables.ts";
import { newId } from "../../src/shared/ids.ts";
import type { Services } from "../../src/services.ts";

export type TestUser = { userId: string; email: string; accessToken: string; auth: { authorization: string } };

export async function signInDirect(services: Services, email: string): Promise<TestUser> {
  const db = services.database.db;
  const now = services.clock.now().toISOString();
  const lower = email.toLowerCase();
  let [user] = await db.select().from(users).where(eq(users.email, lower));
  if (!user) {
    user = { id: newId(), email: lower, name: lower.split("@")[0]!, createdAt: now };
    await db.insert(users).values(user);
  }
  const sessionId = newId();
  await db.insert(authSessions).values({ id: sessionId, userId: user.id, createdAt: now });
  const accessToken = await signAccessToken(services.config.jwtSecret, { userId: user.id, email: lower, sessionId }, services.clock.now());
  return { userId: user.id, email: lower, accessToken, auth: { authorization: `Bearer ${accessToken}` } };
}
