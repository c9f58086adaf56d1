import type { InvitationRow, MemberWithUser, OrganizationRow } from "./repo.ts";
import type { Invitation, Member, Organization } from "./schemas.ts";

// Answer shapes are written by hand (STYLE 4): table rows never leak into responses.

export function presentOrganization(row: OrganizationRow): Organization {
  return { id: row.id, name: row.name, status: row.status, tier: row.tier, created_at: row.createdAt };
}

export function presentMember(row: MemberWithUser): Member {
  return {
    id: row.id,
    user_id: row.userId,
    org_id: row.orgId,
    role: row.role,
    user_email: row.userEmail,
    user_name: row.userName,
    created_at: row.createdAt,
  };
}

export function presentInvitation(row: InvitationRow): Invitation {
  return {
    id: row.id,
    org_id: row.orgId,
    email: row.email,
    role: row.role,
    invited_by: row.invitedBy,
    expires_at: row.expiresAt,
    accepted_at: row.acceptedAt,
    created_at: row.createdAt,
  };
}
