import { keyProcedure, router } from "../../../rpc/init.ts";
import { CreateApiKey, KeyIdParam } from "./schemas.ts";
import { createApiKey, listVisibleApiKeys, revokeVisibleApiKey } from "./service.ts";

export const apiKeysRouter = router({
  create: keyProcedure.input(CreateApiKey).mutation(({ ctx, input }) => createApiKey(ctx.services, ctx.actor, input)),
  list: keyProcedure.query(({ ctx }) => listVisibleApiKeys(ctx.services, ctx.actor)),
  revoke: keyProcedure.input(KeyIdParam).mutation(({ ctx, input }) => revokeVisibleApiKey(ctx.services, ctx.actor, input.key_id)),
});
