import { keyProcedure, router } from "../../../rpc/init.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { CreateEmbeddingProvider, ListEmbeddingProviders, ProviderIdParam, UpdateEmbeddingProviderInput } from "./schemas.ts";
import { createEmbeddingProvider, deleteEmbeddingProvider, getEmbeddingProvider, listEmbeddingProviders, listProviderModels, updateEmbeddingProvider } from "./service.ts";

// `X-Environment-Id` is read from the request headers on both transports.
export const embeddingProvidersRouter = router({
  create: keyProcedure.input(CreateEmbeddingProvider).mutation(({ ctx, input }) => createEmbeddingProvider(ctx.services, ctx.actor, input, ctx.headers.get(ENVIRONMENT_HEADER))),
  list: keyProcedure
    .input(ListEmbeddingProviders.or("undefined"))
    .query(({ ctx, input }) => listEmbeddingProviders(ctx.services, ctx.actor, input ?? {}, ctx.headers.get(ENVIRONMENT_HEADER))),
  get: keyProcedure.input(ProviderIdParam).query(({ ctx, input }) => getEmbeddingProvider(ctx.services, ctx.actor, input.provider_id)),
  update: keyProcedure.input(UpdateEmbeddingProviderInput).mutation(({ ctx, input: { provider_id, ...fields } }) => updateEmbeddingProvider(ctx.services, ctx.actor, provider_id, fields)),
  delete: keyProcedure.input(ProviderIdParam).mutation(({ ctx, input }) => deleteEmbeddingProvider(ctx.services, ctx.actor, input.provider_id)),
  models: keyProcedure.input(ProviderIdParam).query(({ ctx, input }) => listProviderModels(ctx.services, ctx.actor, input.provider_id)),
});
