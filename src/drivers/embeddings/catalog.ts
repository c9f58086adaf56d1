// The embedding model catalog: the table of docs/api.md#models plus what the drivers need to call each model —
// the upstream id (docs/api.md#models: the neutral provider word dropped), how reduced dimensions are
// asked for, and the per-request limits the batcher keeps to.
//
// Sources, checked 2025 (provider docs):
// - OpenAI (emb_a): `input` array ≤ 2048 items, ≤ 8192 tokens per input, ≤ 300,000 tokens summed
//   over one request. `dimensions` exists for text-embedding-3-* only; ada-002 rejects it.
// - Vertex AI (emb_b): ≤ 250 instances and ≤ 20,000 input tokens per request, each input cut at
//   2,048 tokens (autoTruncate, on by default). gemini-embedding-001 takes ONE instance per
//   request. `outputDimensionality` is accepted by gemini-embedding-001 and text-embedding-004/005
//   (any value up to the native size).
// - Voyage AI (emb_c): ≤ 1,000 inputs per request; summed tokens ≤ 1M for voyage-3.5-lite, 320K for
//   voyage-3.5, 120K for voyage-3-large and voyage-code-3. voyage-3-lite is no longer listed; we
//   use the most conservative figure (120K). `output_dimension` takes 256/512/1024/2048 on
//   voyage-3.5, -3.5-lite, -3-large, -code-3; voyage-3-lite has a fixed 512.
//   Note voyage-3.5-lite's own default is 1024 while docs/api.md#models, so emb_c always states the
//   dimension it wants when the model accepts one.

export type ProviderName = "emb_a" | "emb_b" | "emb_c" | "local";
export const PROVIDERS: readonly ProviderName[] = ["emb_a", "emb_b", "emb_c", "local"];

/** How a model's output size may be lowered below its native dimensions. */
export type ReducedDimensions =
  | { kind: "none" }
  | { kind: "range"; min: number } // any integer from min to the native size
  | { kind: "set"; values: readonly number[] }; // only these values (those ≤ native size)

export type ModelSpec = {
  provider: ProviderName;
  /** The name users see (docs/api.md#models). */
  model: string;
  dimensions: number;
  maxTokens: number;
  /** The id sent to the provider's API. */
  upstreamId: string;
  reduced: ReducedDimensions;
  /** Per-request ceilings of the provider for this model. */
  maxInputsPerRequest: number;
  maxTokensPerRequest: number;
};

/** The row `/models` answers (docs/api.md#models). */
export type ModelRow = { model: string; dimensions: number; max_tokens: number; provider: ProviderName };

const VOYAGE_SIZES = [256, 512, 1024, 2048] as const;

function openai(model: string, dimensions: number, reduced: ReducedDimensions): ModelSpec {
  return { provider: "emb_a", model, dimensions, maxTokens: 8191, upstreamId: model, reduced, maxInputsPerRequest: 2048, maxTokensPerRequest: 300_000 };
}

function vertex(model: string, upstreamId: string, dimensions: number, maxInputs: number): ModelSpec {
  return { provider: "emb_b", model, dimensions, maxTokens: 2048, upstreamId, reduced: { kind: "range", min: 1 }, maxInputsPerRequest: maxInputs, maxTokensPerRequest: 20_000 };
}

function voyage(model: string, dimensions: number, maxTokens: number, reduced: boolean, maxTokensPerRequest: number): ModelSpec {
  return {
    provider: "emb_c",
    model,
    dimensions,
    maxTokens,
    upstreamId: model.replace(/^emb_c-/, "voyage-"),
    reduced: reduced ? { kind: "set", values: VOYAGE_SIZES } : { kind: "none" },
    maxInputsPerRequest: 1000,
    maxTokensPerRequest,
  };
}

export const MODELS: readonly ModelSpec[] = [
  openai("text-embedding-3-small", 1536, { kind: "range", min: 1 }),
  openai("text-embedding-3-large", 3072, { kind: "range", min: 1 }),
  openai("text-embedding-ada-002", 1536, { kind: "none" }),
  vertex("emb_b-embedding-001", "gemini-embedding-001", 3072, 1),
  vertex("text-embedding-005", "text-embedding-005", 768, 250),
  vertex("text-embedding-004", "text-embedding-004", 768, 250),
  voyage("emb_c-3.5", 1024, 32000, true, 320_000),
  voyage("emb_c-3.5-lite", 512, 32000, true, 1_000_000),
  voyage("emb_c-code-3", 1024, 16000, true, 120_000),
  voyage("emb_c-3-large", 1024, 32000, true, 120_000),
  voyage("emb_c-3-lite", 512, 32000, false, 120_000),
  // In-process and offline (local.ts). The lexical model computes any size up to 512 natively; the
  // semantic one (local-semantic/) has one size, reads at most 256 tokens of its own vocabulary and
  // runs ~32 texts at a time in its worker, so a request is not limited beyond that.
  {
    provider: "local",
    model: "local-lexical-v1",
    dimensions: 512,
    maxTokens: 8192,
    upstreamId: "local-lexical-v1",
    reduced: { kind: "range", min: 8 },
    maxInputsPerRequest: 10_000,
    maxTokensPerRequest: Number.MAX_SAFE_INTEGER,
  },
  {
    provider: "local",
    model: "local-semantic-v1",
    dimensions: 512,
    maxTokens: 256,
    upstreamId: "local-semantic-v1",
    reduced: { kind: "none" },
    maxInputsPerRequest: 10_000,
    maxTokensPerRequest: Number.MAX_SAFE_INTEGER,
  },
];

export function findModel(provider: ProviderName, model: string): ModelSpec | undefined {
  return MODELS.find((m) => m.provider === provider && m.model === model);
}

export function modelsOf(provider: ProviderName): ModelRow[] {
  return MODELS.filter((m) => m.provider === provider).map((m) => ({
    model: m.model,
    dimensions: m.dimensions,
    max_tokens: m.maxTokens,
    provider: m.provider,
  }));
}

/** The dimension sizes a model can produce, described for an error message. */
function describeAllowed(spec: ModelSpec): string {
  switch (spec.reduced.kind) {
    case "none":
      return `exactly ${spec.dimensions}`;
    case "range":
      return `from ${spec.reduced.min} to ${spec.dimensions}`;
    case "set":
      return `one of ${spec.reduced.values.filter((v) => v <= spec.dimensions).join(", ")}`;
  }
}

export function dimensionsAllowed(spec: ModelSpec, dimensions: number): boolean {
  if (!Number.isInteger(dimensions) || dimensions > spec.dimensions) return false;
  if (dimensions === spec.dimensions) return true;
  switch (spec.reduced.kind) {
    case "none":
      return false;
    case "range":
      return dimensions >= spec.reduced.min;
    case "set":
      return spec.reduced.values.includes(dimensions);
  }
}

/**
 * What is wrong with a (provider, model, dimensions) choice, as `{path, message}` problems ready
 * for a validation_error; empty when the choice is valid. `dimensions` may be omitted (the
 * model's native size is then implied).
 */
export function validateModelChoice(provider: string, model: string, dimensions?: number): { path: string; message: string }[] {
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    return [{ path: "provider", message: `must be one of ${PROVIDERS.join(", ")}` }];
  }
  const spec = findModel(provider as ProviderName, model);
  if (!spec) {
    const names = MODELS.filter((m) => m.provider === provider).map((m) => m.model);
    return [{ path: "model", message: `"${model}" is not a ${provider} model; expected one of ${names.join(", ")}` }];
  }
  if (dimensions !== undefined && !dimensionsAllowed(spec, dimensions)) {
    return [{ path: "dimensions", message: `${model} produces ${describeAllowed(spec)} dimensions, not ${dimensions}` }];
  }
  return [];
}
