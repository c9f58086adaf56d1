import type { Actor, AuthScheme, Authenticator } from "../shared/actor.ts";
import { unauthorized } from "../shared/errors.ts";


export function bearerToken(headers: Headers): string {
  const header = headers.get("authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  if (!match) throw unauthorized(header ? "The Authorization header must be `Bearer <token>`" : "The Authorization header is missing");
  return match[1]!;
}

export async function resolveActor(auth: Authenticator, scheme: AuthScheme, headers: Headers): Promise<Actor | null> {
  if (scheme === "none") return null;
  return auth.resolve(scheme, bearerToken(headers));
}
