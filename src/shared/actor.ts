// Who is calling, as the transport resolved it from `Authorization: Bearer …`. Authentication
// happens in the transport; authorization (roles, permissions, org scope) happens in services.

export type Role = "owner" | "admin" | "member";
export type Permission = "full" | "read_only";

/** A signed-in person, from a JWT access token: organization management only (docs/api.md#authentication). */
export type UserActor = { kind: "user"; userId: string; email: string };

/** An API key acting for its creator in one organization, with the creator's current role. */
export type KeyActor = {
  kind: "api_key";
  keyId: string;
  orgId: string;
  userId: string;
  role: Role;
  permission: Permission;
};

export type Actor = UserActor | KeyActor;

/** Which credential a route takes; the other scheme is refused with 401 (docs/api.md#authentication). */
export type AuthScheme = "none" | "jwt" | "api_key";

/**
 * Turns a bearer token into an Actor for one scheme. The transport calls it (http/auth.ts,
 * rpc/init.ts); the auth domain provides the real one (domains/auth/authenticator.ts).
 */
export interface Authenticator {
  resolve(scheme: Exclude<AuthScheme, "none">, token: string): Promise<Actor>;
}
