// What the fake providers know about their own models — written from the providers' docs,
// independently of src/drivers/embeddings/catalog.ts, so a catalog mistake shows up as an error.
// Fake token count: one token per 4 UTF-8 bytes (BPE averages about that on English), always
// at most the drivers' conservative estimate of one per 3 bytes.

export type FakeProvider = "emb_a" | "emb_b" | "emb_c";

export type UpstreamModel = {
  defaultDims: number;
  /** null: no reduced output; "any": 1..default; else the allowed values. */
  reducible: null | "any" | number[];
  maxInputTokens: number;
  maxInputs: number;
  maxRequestTokens: number;
};

const V = [256, 512, 1024, 2048];

export const UPSTREAM: Record<FakeProvider, Record<string, UpstreamModel>> = {
  emb_a: {
    "text-embedding-3-small": { defaultDims: 1536, reducible: "any", maxInputTokens: 8192, maxInputs: 2048, maxRequestTokens: 300_000 },
    "text-embedding-3-large": { defaultDims: 3072, reducible: "any", maxInputTokens: 8192, maxInputs: 2048, maxRequestTokens: 300_000 },
    "text-embedding-ada-002": { defaultDims: 1536, reducible: null, maxInputTokens: 8192, maxInputs: 2048, maxRequestTokens: 300_000 },
  },
  emb_b: {
    "gemini-embedding-001": { defaultDims: 3072, reducible: "any", maxInputTokens: 2048, maxInputs: 1, maxRequestTokens: 20_000 },
    "text-embedding-005": { defaultDims: 768, reducible: "any", maxInputTokens: 2048, maxInputs: 250, maxRequestTokens: 20_000 },
    "text-embedding-004": { defaultDims: 768, reducible: "any", maxInputTokens: 2048, maxInputs: 250, maxRequestTokens: 20_000 },
  },
  emb_c: {
    "voyage-3.5": { defaultDims: 1024, reducible: V, maxInputTokens: 32000, maxInputs: 1000, maxRequestTokens: 320_000 },
    "voyage-3.5-lite": { defaultDims: 1024, reducible: V, maxInputTokens: 32000, maxInputs: 1000, maxRequestTokens: 1_000_000 },
    "voyage-code-3": { defaultDims: 1024, reducible: V, maxInputTokens: 32000, maxInputs: 1000, maxRequestTokens: 120_000 },
    "voyage-3-large": { defaultDims: 1024, reducible: V, maxInputTokens: 32000, maxInputs: 1000, maxRequestTokens: 120_000 },
    "voyage-3-lite": { defaultDims: 512, reducible: null, maxInputTokens: 32000, maxInputs: 1000, maxRequestTokens: 120_000 },
  },
};

export function fakeTokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text, "utf8") / 4));
}

/** Cuts a text to `maxTokens` fake tokens (server-side truncation). */
export function fakeTruncate(text: string, maxTokens: number): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= maxTokens * 4 ? text : bytes.subarray(0, maxTokens * 4).toString("utf8");
}

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A second 32-bit hash, unrelated to FNV's (murmur-style mixing), for the fake's seed. */
function mix(s: string): number {
  let h = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/**
 * The fake's embedding: a unit vector drawn from a PRNG (mulberry32) seeded by model, kind and
 * text. A reduced size is a prefix of the full one, renormalised, as Matryoshka models do. The
 * seed is two unrelated 32-bit hashes: with FNV's alone two of a fault world's ~35k texts
 * ("crash row 35299 silent river", "crash row 12193 silent lantern") got one vector, and the
 * harness saw a row outranked by its twin at score 1.0 (a collision per ~2^32 pairs; now ~2^64).
 */
export function fakeVector(model: string, kind: string, text: string, dims: number): number[] {
  const key = `${model}\u0000${kind}\u0000${text}`;
  let seed = fnv(key);
  const other = mix(key);
  const out = new Array<number>(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = (seed ^ Math.imul(other, i + 1)) >>> 0;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const v = ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
    out[i] = v;
    norm += v * v;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < dims; i++) out[i] = out[i]! * inv;
  return out;
}
