import type { KeyActor, Role, UserActor } from "./actor.ts";
import { AppError } from "./errors.ts";

// Authorization helpers every domain service calls (the transport only authenticates).

/**
 * A `read_only` key may only read (GET endpoints and the query endpoint, docs/api.md#permissions); every
 * service operation that changes something calls this first.
 */
export function requireWriteAccess(actor: KeyActor): void {
  if (actor.permission !== "full") throw new AppError("insufficient_permission", "This API key is read-only; this operation needs a key with permission `full`");
}

/** Role rules (docs/api.md#permissions): the caller's role in the organization must be one of `allowed`. */
export function requireRole(role: Role, allowed: readonly Role[], what: string): void {
  if (!allowed.includes(role)) throw new AppError("insufficient_role", `Only ${allowed.join(" or ")} may ${what}`);
}

export const isManager = (role: Role): boolean => role === "owner" || role === "admin";

export type { KeyActor, UserActor };
