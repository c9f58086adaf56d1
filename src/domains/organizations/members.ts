import type { Services } from "../../services.ts";
import type { UserActor } from "../../shared/actor.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { revokeMemberApiKeys } from "../api-keys/repo.ts";
import { membershipOf, requireActive, requireOrgRole } from "./access.ts";
import { presentMember } from "./present.ts";
import { deleteMember, findMember, findMemberWithUser, listMembersWithUsers, setMemberRole } from "./repo.ts";
import type { Member, TransferOwnership } from "./schemas.ts";

export async function listMembers(services: Services, actor: UserActor, orgId: string): Promise<{ data: Member[] }> {
  const db = services.database.db;
  await membershipOf(db, orgId, actor.userId);
  return { data: (await listMembersWithUsers(db, orgId)).map(presentMember) };
}

/** Removes a membership and, in the same transaction, every key that member made there (docs/api.md#members). */
async function endMembership(services: Services, orgId: string, userId: string): Promise<void> {
  const at = services.clock.now().toISOString();
  await services.database.db.transaction(async (tx) => {
    await deleteMember(tx, orgId, userId);
    await revokeMemberApiKeys(tx, orgId, userId, at);
  });
}

/** DELETE /v1/organizations/{id}/members/{user_id}: admin or owner; never the owner. */
export async function removeMember(services: Services, actor: UserActor, orgId: string, userId: string): Promise<void> {
  const db = services.database.db;
  const membership = await membershipOf(db, orgId, actor.userId);
  requireOrgRole(membership, ["owner", "admin"], "remove members");
  requireActive(membership.org);
  const target = await findMember(db, orgId, userId);
  if (!target) throw notFound("Member");
  if (target.role === "owner") throw new AppError("insufficient_role", "The owner cannot be removed; transfer ownership first");
  await endMembership(services, orgId, userId);
}

/** POST /v1/organizations/{id}/leave: any member but the owner, who must transfer or delete. */
export async function leaveOrganization(services: Services, actor: UserActor, orgId: string): Promise<void> {
  const membership = await membershipOf(services.database.db, orgId, actor.userId);
  if (membership.member.role === "owner") {
    throw new AppError("insufficient_role", "The owner cannot leave; transfer ownership or delete the organization instead");
  }
  requireActive(membership.org);
  await endMembership(services, orgId, actor.userId);
}

/** POST /v1/organizations/{id}/transfer-ownership: the target becomes owner, the caller admin. */
export async function transferOwnership(services: Services, actor: UserActor, orgId: string, input: TransferOwnership): Promise<Member> {
  const db = services.database.db;
  const membership = await membershipOf(db, orgId, actor.userId);
  requireOrgRole(membership, ["owner"], "transfer ownership");
  requireActive(membership.org);
  const target = await findMember(db, orgId, input.user_id);
  if (!target) throw notFound("Member");
  if (target.userId !== actor.userId) {
    await db.transaction(async (tx) => {
      await setMemberRole(tx, orgId, actor.userId, "admin");
      await setMemberRole(tx, orgId, target.userId, "owner");
    });
  }
  const updated = await findMemberWithUser(db, orgId, target.userId);
  if (!updated) throw notFound("Member");
  return presentMember(updated);
}
