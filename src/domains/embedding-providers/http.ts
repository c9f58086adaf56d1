import { defineRoute } from "../../http/route.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { CreateEmbeddingProvider, EmbeddingProvider, EmbeddingProviderPage, ListEmbeddingProviders, ModelList, UpdateEmbeddingProvider } from "./schemas.ts";
import { createEmbeddingProvider, deleteEmbeddingProvider, getEmbeddingProvider, listEmbeddingProviders, listProviderModels, updateEmbeddingProvider } from "./service.ts";

const tag = "Embedding providers";
const environmentHeader = (what: string) => [{ name: "X-Environment-Id", description: what }];

export const embeddingProviderRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/embedding-providers",
    tag,
    summary: "Create an embedding provider (the api_key is stored encrypted and never returned)",
    auth: "api_key",
    errors: ["not_found", "name_taken"],
    headers: environmentHeader("The environment to create it in; absent → prod"),
    body: CreateEmbeddingProvider,
    status: 201,
    response: EmbeddingProvider,
    handler: ({ services, actor, body, headers }) => createEmbeddingProvider(services, actor, body, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/embedding-providers",
    tag,
    summary: "List embedding providers (cursor pagination, oldest first)",
    auth: "api_key",
    errors: ["not_found"],
    headers: environmentHeader("When present, only the providers of this environment"),
    query: ListEmbeddingProviders,
    response: EmbeddingProviderPage,
    handler: ({ services, actor, query, headers }) => listEmbeddingProviders(services, actor, query, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/embedding-providers/:provider_id",
    tag,
    summary: "Get an embedding provider",
    auth: "api_key",
    response: EmbeddingProvider,
    handler: ({ services, actor, params }) => getEmbeddingProvider(services, actor, params.provider_id),
  }),
  defineRoute({
    method: "PUT",
    path: "/v1/embedding-providers/:provider_id",
    tag,
    summary: "Update an embedding provider's name, api_key, default_model or base_url",
    auth: "api_key",
    errors: ["name_taken"],
    body: UpdateEmbeddingProvider,
    response: EmbeddingProvider,
    handler: ({ services, actor, params, body }) => updateEmbeddingProvider(services, actor, params.provider_id, body),
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/embedding-providers/:provider_id",
    tag,
    summary: "Delete an embedding provider (not while a vector table uses it)",
    auth: "api_key",
    errors: ["in_use"],
    status: 204,
    handler: ({ services, actor, params }) => deleteEmbeddingProvider(services, actor, params.provider_id),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/embedding-providers/:provider_id/models",
    tag,
    summary: "The models this provider offers",
    auth: "api_key",
    response: ModelList,
    handler: ({ services, actor, params }) => listProviderModels(services, actor, params.provider_id),
  }),
];
