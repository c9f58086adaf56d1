// The drivers under the contract suite: each hosted one against its fake, and the local one.
// Each subject names the behaviours it skips and why (STYLE habit 7).
import { createEmbeddingProvider, type EmbeddingProvider, type HostedTuning, type ProviderName } from "../../../src/drivers/embeddings/index.ts";
import { estimateTokens } from "../../../src/drivers/embeddings/tokens.ts";
import { tokenCounterFor } from "../../../src/drivers/embeddings/tokenizer.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";

export type Behaviour = "http" | "kinds" | "server-truncation" | "base64";

export type Subject = {
  provider: ProviderName;
  /** A model, its native size and a reduced size it accepts (the native one where it has no other). */
  model: string;
  upstreamId: string;
  dims: number;
  reducedDims: number;
  /** A reduced size the model does not accept. */
  badDims: number;
  /** The body field that carries the requested size, or null (local). */
  dimsField: ((body: Record<string, unknown>) => unknown) | null;
  /** What the fake keys vectors by as the input kind, per kind. */
  wireKind: { document: string; query: string };
  /** The token count the driver batches and reserves by (emb_a: cl100k_base, exact). */
  tokens(text: string): number;
  /**
   * Whether the fake's own count (4 bytes per token) never exceeds the driver's, so the fake can
   * enforce a token ceiling; false for emb_a, where the driver counts exactly with cl100k_base.
   */
  fakeCountsLikeDriver: boolean;
  /** The vector of one text embedded on its own, where no formula gives it (a real model). */
  alone?: (text: string, dims: number) => Promise<number[]>;
  skips: Partial<Record<Behaviour, string>>;
};

const cl100k = await tokenCounterFor("emb_a");
const exact = (text: string) => cl100k.fit(text, Number.MAX_SAFE_INTEGER).tokens;

export const SUBJECTS: Subject[] = [
  {
    provider: "emb_a",
    model: "text-embedding-3-small",
    upstreamId: "text-embedding-3-small",
    dims: 1536,
    reducedDims: 256,
    badDims: 2000,
    dimsField: (b) => b.dimensions,
    wireKind: { document: "none", query: "none" },
    tokens: exact,
    fakeCountsLikeDriver: false,
    skips: {
      kinds: "the OpenAI API has no document/query distinction",
      "server-truncation": "no server-side truncation: inputs are cut client-side (tested)",
    },
  },
  {
    provider: "emb_b",
    model: "text-embedding-005",
    upstreamId: "text-embedding-005",
    dims: 768,
    reducedDims: 256,
    badDims: 1024,
    dimsField: (b) => (b.parameters as Record<string, unknown>).outputDimensionality,
    wireKind: { document: "RETRIEVAL_DOCUMENT", query: "RETRIEVAL_QUERY" },
    tokens: estimateTokens,
    fakeCountsLikeDriver: true,
    skips: { base64: "Vertex AI answers JSON numbers only" },
  },
  {
    provider: "emb_c",
    model: "emb_c-3.5",
    upstreamId: "voyage-3.5",
    dims: 1024,
    reducedDims: 256,
    badDims: 300,
    dimsField: (b) => b.output_dimension,
    wireKind: { document: "document", query: "query" },
    tokens: estimateTokens,
    fakeCountsLikeDriver: true,
    skips: {},
  },
  {
    provider: "local",
    model: "local-lexical-v1",
    upstreamId: "local-lexical-v1",
    dims: 512,
    reducedDims: 128,
    badDims: 1024,
    dimsField: null,
    wireKind: { document: "-", query: "-" },
    tokens: estimateTokens,
    fakeCountsLikeDriver: true,
    skips: {
      http: "in-process: no requests, keys, rate limits, retries or upstream answers to validate",
      kinds: "lexical: documents and queries are embedded alike",
      "server-truncation": "in-process: inputs are cut to max_tokens locally",
      base64: "in-process: no wire encoding",
    },
  },
  {
    provider: "local",
    model: "local-semantic-v1",
    upstreamId: "local-semantic-v1",
    dims: 512,
    reducedDims: 512,
    badDims: 256,
    dimsField: null,
    wireKind: { document: "-", query: "-" },
    tokens: estimateTokens,
    fakeCountsLikeDriver: true,
    alone: async (text, dims) => Array.from((await createEmbeddingProvider({ provider: "local" }).embed([text], { model: "local-semantic-v1", dimensions: dims, kind: "document" }))[0]!),
    skips: {
      http: "in-process: no requests, keys, rate limits, retries or upstream answers to validate",
      kinds: "the model embeds documents and queries alike (a query only goes ahead in the worker's queue)",
      "server-truncation": "in-process: inputs are cut to max_tokens locally",
      base64: "in-process: no wire encoding",
    },
  },
];

/** Fast retries for tests: 5 ms doubling, 4 attempts. */
export const FAST: Partial<HostedTuning> = {
  concurrency: 4,
  timeoutMs: 2_000,
  retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 50 },
  rateLimits: { requestsPerMinute: 60_000, tokensPerMinute: 100_000_000 },
};

export type World = { fake: FakeEmbeddings | null; driver(tuning?: Partial<HostedTuning>, apiKey?: string): EmbeddingProvider };

export async function world(subject: Subject): Promise<World> {
  if (subject.provider === "local") return { fake: null, driver: () => createEmbeddingProvider({ provider: "local" }) };
  const fake = await startFakeEmbeddings(subject.provider);
  return {
    fake,
    driver: (tuning = {}, apiKey = fake.apiKey) =>
      createEmbeddingProvider({ provider: subject.provider, apiKey, baseUrl: fake.url, tuning: { ...FAST, ...tuning } }),
  };
}

export const texts = (n: number, prefix = "row") => Array.from({ length: n }, (_, i) => `${prefix} ${i}: ${"word ".repeat(i % 7)}end`);
