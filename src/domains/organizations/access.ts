import type { Executor } from "../../db/executor.ts";
import type { Role } from "../../shared/actor.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { findMember, findOrganization, type MemberRow, type OrganizationRow } from "./repo.ts";

// Every organization endpoint starts here: a signed-in user who is not a member gets 404, never
// 403 (docs/api.md#permissions), so the existence of other organizations is not revealed.

export type Membership = { org: OrganizationRow; member: MemberRow };

export async function membershipOf(db: Executor, orgId: string, userId: string): Promise<Membership> {
  const [org, member] = await Promise.all([findOrganization(db, orgId), findMember(db, orgId, userId)]);
  if (!org || !member) throw notFound("Organization");
  return { org, member };
}

export function requireOrgRole(membership: Membership, allowed: readonly Role[], what: string): void {
  if (!allowed.includes(membership.member.role)) throw new AppError("insufficient_role", `Only the organization's ${allowed.join(" or ")} may ${what}`);
}

/** Changes to an organization that is being deleted would be lost or resurrect it: refused. */
export function requireActive(org: OrganizationRow): void {
  if (org.status !== "active") throw new AppError("organization_deleting", "The organization is being deleted");
}
