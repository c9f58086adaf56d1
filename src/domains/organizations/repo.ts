import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { users } from "../auth/tables.ts";
import { invitations, members, organizations } from "./tables.ts";

// Named queries over organizations, members and invitations; no business rules.

export type OrganizationRow = typeof organizations.$inferSelect;
export type MemberRow = typeof members.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;
export type MemberWithUser = MemberRow & { userEmail: string; userName: string };

export async function insertOrganization(db: Executor, row: OrganizationRow): Promise<void> {
  await db.insert(organizations).values(row);
}

export async function findOrganization(db: Executor, id: string): Promise<OrganizationRow | undefined> {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, id));
  return row;
}

export async function findOrganizationByName(db: Executor, name: string): Promise<OrganizationRow | undefined> {
  const [row] = await db.select().from(organizations).where(eq(organizations.name, name));
  return row;
}

/** Moves an active organization to `deleting`; false when another request got there first. */
export async function markOrganizationDeleting(db: Executor, id: string): Promise<boolean> {
  const result = await db.update(organizations).set({ status: "deleting" }).where(and(eq(organizations.id, id), eq(organizations.status, "active")));
  return result.rowsAffected === 1;
}

export async function deleteOrganizationRow(db: Executor, id: string): Promise<void> {
  await db.delete(organizations).where(eq(organizations.id, id));
}

/** The user's organizations with their role in each, oldest organization first. */
export function listUserOrganizations(db: Executor, userId: string): Promise<{ org: OrganizationRow; role: MemberRow["role"] }[]> {
  return db
    .select({ org: organizations, role: members.role })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.orgId))
    .where(eq(members.userId, userId))
    .orderBy(asc(organizations.createdAt), asc(organizations.id));
}

export async function insertMember(db: Executor, row: MemberRow): Promise<void> {
  await db.insert(members).values(row);
}

export async function findMember(db: Executor, orgId: string, userId: string): Promise<MemberRow | undefined> {
  const [row] = await db.select().from(members).where(and(eq(members.orgId, orgId), eq(members.userId, userId)));
  return row;
}

const memberWithUser = {
  id: members.id,
  orgId: members.orgId,
  userId: members.userId,
  role: members.role,
  createdAt: members.createdAt,
  userEmail: users.email,
  userName: users.name,
};

export function listMembersWithUsers(db: Executor, orgId: string): Promise<MemberWithUser[]> {
  return db.select(memberWithUser).from(members).innerJoin(users, eq(users.id, members.userId)).where(eq(members.orgId, orgId)).orderBy(asc(members.createdAt), asc(members.id));
}

export async function findMemberWithUser(db: Executor, orgId: string, userId: string): Promise<MemberWithUser | undefined> {
  const [row] = await db.select(memberWithUser).from(members).innerJoin(users, eq(users.id, members.userId)).where(and(eq(members.orgId, orgId), eq(members.userId, userId)));
  return row;
}

export async function findMemberByEmail(db: Executor, orgId: string, email: string): Promise<MemberRow | undefined> {
  const [row] = await db.select({ member: members }).from(members).innerJoin(users, eq(users.id, members.userId)).where(and(eq(members.orgId, orgId), eq(users.email, email)));
  return row?.member;
}

export async function setMemberRole(db: Executor, orgId: string, userId: string, role: MemberRow["role"]): Promise<void> {
  await db.update(members).set({ role }).where(and(eq(members.orgId, orgId), eq(members.userId, userId)));
}

export async function deleteMember(db: Executor, orgId: string, userId: string): Promise<void> {
  await db.delete(members).where(and(eq(members.orgId, orgId), eq(members.userId, userId)));
}

export async function deleteOrganizationMembers(db: Executor, orgId: string): Promise<void> {
  await db.delete(members).where(eq(members.orgId, orgId));
}

export async function insertInvitation(db: Executor, row: InvitationRow): Promise<void> {
  await db.insert(invitations).values(row);
}

/** An unaccepted, unexpired invitation of this e-mail to this organization. */
export async function findPendingInvitation(db: Executor, orgId: string, email: string, now: string): Promise<InvitationRow | undefined> {
  const [row] = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.orgId, orgId), eq(invitations.email, email), isNull(invitations.acceptedAt), gt(invitations.expiresAt, now)));
  return row;
}

export function listUnacceptedInvitations(db: Executor, orgId: string): Promise<InvitationRow[]> {
  return db.select().from(invitations).where(and(eq(invitations.orgId, orgId), isNull(invitations.acceptedAt))).orderBy(asc(invitations.createdAt), asc(invitations.id));
}

export async function findInvitationByTokenHash(db: Executor, tokenHash: string): Promise<InvitationRow | undefined> {
  const [row] = await db.select().from(invitations).where(eq(invitations.tokenHash, tokenHash));
  return row;
}

/** Marks the invitation used; false when a concurrent accept used it first. */
export async function markInvitationAccepted(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db.update(invitations).set({ acceptedAt: at }).where(and(eq(invitations.id, id), isNull(invitations.acceptedAt)));
  return result.rowsAffected === 1;
}

export async function deleteOrganizationInvitations(db: Executor, orgId: string): Promise<void> {
  await db.delete(invitations).where(eq(invitations.orgId, orgId));
}

export async function findUser(db: Executor, userId: string): Promise<{ id: string; email: string; name: string } | undefined> {
  const [row] = await db.select({ id: users.id, email: users.email, name: users.name }).from(users).where(eq(users.id, userId));
  return row;
}
