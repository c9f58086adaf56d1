import { keyProcedure, router } from "../../../rpc/init.ts";
import { CreateEnvironment, EnvironmentIdParam, ListEnvironments } from "./schemas.ts";
import { createEnvironment, deleteEnvironment, getEnvironment, listEnvironments } from "./service.ts";

export const environmentsRouter = router({
  create: keyProcedure.input(CreateEnvironment).mutation(({ ctx, input }) => createEnvironment(ctx.services, ctx.actor, input)),
  list: keyProcedure.input(ListEnvironments.or("undefined")).query(({ ctx, input }) => listEnvironments(ctx.services, ctx.actor, input ?? {})),
  get: keyProcedure.input(EnvironmentIdParam).query(({ ctx, input }) => getEnvironment(ctx.services, ctx.actor, input.environment_id)),
  delete: keyProcedure.input(EnvironmentIdParam).mutation(({ ctx, input }) => deleteEnvironment(ctx.services, ctx.actor, input.environment_id)),
});
