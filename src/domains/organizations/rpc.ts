import { router, userProcedure } from "../../../rpc/init.ts";
import { acceptInvitation, createInvitation, listInvitations } from "./invitations.ts";
import { leaveOrganization, listMembers, removeMember, transferOwnership } from "./members.ts";
import { AcceptInput, CreateOrganization, InvitationInput, MemberParam, OrgApiKeyInput, OrgIdParam, TransferInput } from "./schemas.ts";
import { createOrganization, createOrganizationApiKey, deleteOrganization, getOrganization, listOrganizations } from "./service.ts";

// The same operations as REST; path parameters travel as input fields.
export const organizationsRouter = router({
  create: userProcedure.input(CreateOrganization).mutation(({ ctx, input }) => createOrganization(ctx.services, ctx.actor, input)),
  list: userProcedure.query(({ ctx }) => listOrganizations(ctx.services, ctx.actor)),
  get: userProcedure.input(OrgIdParam).query(({ ctx, input }) => getOrganization(ctx.services, ctx.actor, input.org_id)),
  delete: userProcedure.input(OrgIdParam).mutation(({ ctx, input }) => deleteOrganization(ctx.services, ctx.actor, input.org_id)),
  createApiKey: userProcedure.input(OrgApiKeyInput).mutation(({ ctx, input }) => {
    const { org_id, ...body } = input;
    return createOrganizationApiKey(ctx.services, ctx.actor, org_id, body);
  }),
  members: userProcedure.input(OrgIdParam).query(({ ctx, input }) => listMembers(ctx.services, ctx.actor, input.org_id)),
  removeMember: userProcedure.input(MemberParam).mutation(({ ctx, input }) => removeMember(ctx.services, ctx.actor, input.org_id, input.user_id)),
  leave: userProcedure.input(OrgIdParam).mutation(({ ctx, input }) => leaveOrganization(ctx.services, ctx.actor, input.org_id)),
  transferOwnership: userProcedure
    .input(TransferInput)
    .mutation(({ ctx, input }) => transferOwnership(ctx.services, ctx.actor, input.org_id, { user_id: input.user_id })),
  createInvitation: userProcedure
    .input(InvitationInput)
    .mutation(({ ctx, input }) => createInvitation(ctx.services, ctx.actor, input.org_id, { email: input.email, role: input.role })),
  invitations: userProcedure.input(OrgIdParam).query(({ ctx, input }) => listInvitations(ctx.services, ctx.actor, input.org_id)),
  acceptInvitation: userProcedure.input(AcceptInput).mutation(({ ctx, input }) => acceptInvitation(ctx.services, ctx.actor, input.token)),
});
