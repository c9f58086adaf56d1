import { type } from "arktype";
import { CreateApiKey } from "../api-keys/schemas.ts";

// Organization names: 1-100 characters, not blank, unique across the service (docs/api.md#organizations, docs/api.md#conventions).
export const OrganizationName = type("1 <= string <= 100").narrow((s, ctx) => s.trim().length > 0 || ctx.mustBe("a name that is not blank"));

export const CreateOrganization = type({ "+": "reject", name: OrganizationName });
export type CreateOrganization = typeof CreateOrganization.infer;

export const TransferOwnership = type({ "+": "reject", user_id: "string > 0" });
export type TransferOwnership = typeof TransferOwnership.infer;

export const CreateInvitation = type({ "+": "reject", email: "string.email <= 254", role: "'admin' | 'member'" });
export type CreateInvitation = typeof CreateInvitation.infer;

// tRPC inputs carry the path parameters as fields.
export const OrgIdParam = type({ "+": "reject", org_id: "string" });
export const MemberParam = type({ "+": "reject", org_id: "string", user_id: "string" });
export const TransferInput = type({ "+": "reject", org_id: "string", user_id: "string > 0" });
export const InvitationInput = type({ "+": "reject", org_id: "string", email: "string.email <= 254", role: "'admin' | 'member'" });
export const AcceptInput = type({ "+": "reject", token: "string" });
export const OrgApiKeyInput = type({ "+": "reject", org_id: "string", name: CreateApiKey.get("name"), "permission?": CreateApiKey.get("permission") });

export const Organization = type({ id: "string", name: "string", status: "'active' | 'deleting'", tier: "string", created_at: "string" });
export type Organization = typeof Organization.infer;

export const Member = type({
  id: "string",
  user_id: "string",
  org_id: "string",
  role: "'owner' | 'admin' | 'member'",
  user_email: "string",
  user_name: "string",
  created_at: "string",
});
export type Member = typeof Member.infer;

export const Invitation = type({
  id: "string",
  org_id: "string",
  email: "string",
  role: "'admin' | 'member'",
  invited_by: "string",
  expires_at: "string",
  accepted_at: "string | null",
  created_at: "string",
});
export type Invitation = typeof Invitation.infer;

/** GET /v1/organizations: each of the caller's organizations with the caller's role in it. */
export const OrganizationWithRole = Organization.and({ role: "'owner' | 'admin' | 'member'" });
export type OrganizationWithRole = typeof OrganizationWithRole.infer;
export const OrganizationList = type({ data: OrganizationWithRole.array() });

export const CreatedOrganization = type({ organization: Organization, api_key: "string" });
export const DeletingOrganization = type({ organization_id: "string", status: "'deleting'", task_id: "string" });
export const CreatedInvitation = Invitation.and({ token: "string" });
export const AcceptedInvitation = Member.and({ api_key: "string" });
export const MemberList = type({ data: Member.array() });
export const InvitationList = type({ data: Invitation.array() });
