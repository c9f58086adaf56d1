import { type } from "arktype";
import { PageQuery, pageSchema } from "../../shared/pagination.ts";

// The api_key and base_url are checked here for type and length only: arktype's messages quote
// the offending value ("must be … (was "…")"), and a secret must never come back in an error.
// Their content rules live in the service, with messages that do not repeat the value.

export const ProviderKind = type("'emb_a' | 'emb_b' | 'emb_c' | 'local'");

const ProviderName = type("1 <= string <= 100");
const ApiKey = type("1 <= string <= 4096").describe("the embedding service's API key (1-4096 characters)");
const ModelName = type("1 <= string <= 200");
const BaseUrl = type("1 <= string <= 2048").describe("an http(s) URL, version path included");

export const CreateEmbeddingProvider = type({
  "+": "reject",
  name: ProviderName,
  provider: ProviderKind,
  "api_key?": ApiKey,
  "default_model?": ModelName,
  "base_url?": BaseUrl,
});
export type CreateEmbeddingProvider = typeof CreateEmbeddingProvider.infer;

/** PUT: every field optional; `default_model` and `base_url` may be set to null to clear them. */
const updateFields = {
  "name?": ProviderName,
  "api_key?": ApiKey,
  "default_model?": ModelName.or("null"),
  "base_url?": BaseUrl.or("null"),
} as const;

export const UpdateEmbeddingProvider = type({ "+": "reject", ...updateFields });
export type UpdateEmbeddingProvider = typeof UpdateEmbeddingProvider.infer;

export const ProviderIdParam = type({ "+": "reject", provider_id: "string" });

/** tRPC carries the id beside the fields REST takes from the path. */
export const UpdateEmbeddingProviderInput = type({ "+": "reject", provider_id: "string", ...updateFields });

export const ListEmbeddingProviders = PageQuery;

export const EmbeddingProvider = type({
  id: "string",
  org_id: "string",
  environment_id: "string",
  name: "string",
  provider: ProviderKind,
  default_model: "string | null",
  base_url: "string | null",
  status: "'active'",
  created_at: "string",
});
export type EmbeddingProvider = typeof EmbeddingProvider.infer;

export const EmbeddingProviderPage = pageSchema(EmbeddingProvider);

export const ModelList = type({
  models: type({ model: "string", dimensions: "number.integer", max_tokens: "number.integer", provider: ProviderKind }).array(),
});
export type ModelList = typeof ModelList.infer;
