import { createHash, randomBytes } from "node:crypto";
import type { Services } from "../../services.ts";
import type { UserActor } from "../../shared/actor.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { issueApiKey } from "../api-keys/service.ts";
import { membershipOf, requireActive, requireOrgRole } from "./access.ts";
import { presentInvitation, presentMember } from "./present.ts";
import {
  findInvitationByTokenHash,
  findMember,
  findMemberByEmail,
  findMemberWithUser,
  findOrganization,
  findPendingInvitation,
  insertInvitation,
  insertMember,
  listUnacceptedInvitations,
  markInvitationAccepted,
  type InvitationRow,
} from "./repo.ts";
import type { CreateInvitation, Invitation, Member } from "./schemas.ts";
import { FIRST_KEY_NAME } from "./service.ts";

export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000; // docs/api.md#limits

// Accept tokens are 256 random bits, shown once (create answer and e-mail), stored as SHA-256.
const newToken = () => randomBytes(32).toString("base64url");
const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** POST /v1/organizations/{id}/invitations: admin or owner; one pending invitation per e-mail. */
export async function createInvitation(services: Services, actor: UserActor, orgId: string, input: CreateInvitation): Promise<Invitation & { token: string }> {
  const db = services.database.db;
  const membership = await membershipOf(db, orgId, actor.userId);
  requireOrgRole(membership, ["owner", "admin"], "invite people");
  requireActive(membership.org);
  const email = input.email.toLowerCase();
  const now = services.clock.now();
  if (await findMemberByEmail(db, orgId, email)) throw new AppError("already_member", `${email} is already a member of this organization`);
  if (await findPendingInvitation(db, orgId, email, now.toISOString())) {
    throw new AppError("invitation_pending", `${email} already has a pending invitation to this organization`);
  }
  const token = newToken();
  const row: InvitationRow = {
    id: newId(),
    orgId,
    email,
    role: input.role,
    invitedBy: actor.userId,
    tokenHash: hashToken(token),
    expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS).toISOString(),
    acceptedAt: null,
    createdAt: now.toISOString(),
  };
  await insertInvitation(db, row);
  await sendInvitationMail(services, { to: email, orgName: membership.org.name, role: input.role, token, expiresAt: row.expiresAt });
  return { ...presentInvitation(row), token };
}

/** The token is also in the create answer, so a mail failure is logged, not fatal. */
async function sendInvitationMail(services: Services, m: { to: string; orgName: string; role: string; token: string; expiresAt: string }): Promise<void> {
  const text = [
    `You have been invited to join the organization "${m.orgName}" on vecsync as ${m.role}.`,
    "",
    "Sign in to vecsync, then accept the invitation with:",
    `  POST /v1/organizations/invitations/${m.token}/accept`,
    "",
    `Invitation token: ${m.token}`,
    `The invitation expires at ${m.expiresAt}.`,
  ].join("\n");
  try {
    await services.mailer.send({ to: m.to, subject: `You're invited to join ${m.orgName} on vecsync`, text });
  } catch (err) {
    services.logger.error({ err, to: m.to }, "invitation e-mail could not be sent");
  }
}

export async function listInvitations(services: Services, actor: UserActor, orgId: string): Promise<{ data: Invitation[] }> {
  const db = services.database.db;
  const membership = await membershipOf(db, orgId, actor.userId);
  requireOrgRole(membership, ["owner", "admin"], "see invitations");
  return { data: (await listUnacceptedInvitations(db, orgId)).map(presentInvitation) };
}

/**
 * POST /v1/organizations/invitations/{token}/accept: any signed-in user; the membership is bound
 * to the caller and comes with its first API key, shown once (docs/api.md#invitations).
 */
export async function acceptInvitation(services: Services, actor: UserActor, token: string): Promise<Member & { api_key: string }> {
  const db = services.database.db;
  const invitation = await findInvitationByTokenHash(db, hashToken(token));
  if (!invitation || invitation.acceptedAt) throw notFound("Invitation");
  const org = await findOrganization(db, invitation.orgId);
  if (!org) throw notFound("Invitation");
  const now = services.clock.now();
  if (now.toISOString() >= invitation.expiresAt) throw new AppError("invitation_expired", "The invitation has expired; ask for a new one");
  requireActive(org);
  if (await findMember(db, org.id, actor.userId)) throw new AppError("already_member", "You are already a member of this organization");
  const at = now.toISOString();
  let raw: string;
  try {
    raw = await db.transaction(async (tx) => {
      if (!(await markInvitationAccepted(tx, invitation.id, at))) throw notFound("Invitation");
      await insertMember(tx, { id: newId(), orgId: org.id, userId: actor.userId, role: invitation.role, createdAt: at });
      const key = await issueApiKey(tx, { orgId: org.id, userId: actor.userId, name: FIRST_KEY_NAME, permission: "full", now });
      return key.raw;
    });
  } catch (err) {
    // Two accepts by the same user racing past the check above meet the (org, user) unique index.
    if (isUniqueViolation(err)) throw new AppError("already_member", "You are already a member of this organization");
    throw err;
  }
  const member = await findMemberWithUser(db, org.id, actor.userId);
  if (!member) throw notFound("Member");
  return { ...presentMember(member), api_key: raw };
}
