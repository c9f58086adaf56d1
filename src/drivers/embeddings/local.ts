// Provider `local`: embeddings computed in process, offline, with no key — for trying vecsync,
// for tests and for air-gapped installs. Two models:
// - `local-semantic-v1` (local-semantic/): a sentence encoder in a worker thread, ~50 product rows
//   a second per core.
// - `local-lexical-v1` (below): hashed words, computed on the spot, ~60,000 product rows a second.
//
// `local-lexical-v1` is LEXICAL, NOT SEMANTIC. Texts come out close when they share words, word
// pairs and spelling fragments; "car" and "automobile" are unrelated to it. For meaning, use
// `local-semantic-v1` or a hosted model.
//
// Method: signed feature hashing (Weinberger et al. 2009) of three feature kinds —
// word unigrams, word bigrams and character 3- and 4-grams of each word with boundary marks
// (so "embed" and "embedding" share fragments) — weighted by kind and by sublinear term
// frequency (1 + ln tf), projected into `dimensions` buckets with a hash-chosen sign (collisions
// cancel on average instead of piling up), then L2-normalised so cosine = dot product.
// Deterministic: the same text gives the same vector on every machine and release of this model.
import { DriverError } from "../../shared/errors.ts";
import { findModel, validateModelChoice, type ModelSpec } from "./catalog.ts";
import { embedSemantic, SEMANTIC_MODEL } from "./local-semantic/index.ts";
import { count, emptyStats, type EmbeddingStats } from "./stats.ts";
import { estimateTokens, truncateToTokens } from "./tokens.ts";
import type { EmbeddingObserver, EmbeddingProvider, EmbedOptions } from "./types.ts";

const KIND_WORD = 0;
const KIND_BIGRAM = 1;
const KIND_CHARGRAM = 2;
/** Words weigh most; fragments are many per word, so each weighs less. */
const WEIGHTS = [1.0, 0.7, 0.35, 0];

/** FNV-1a over s[start, end), seeded. */
function fnv(s: string, start: number, end: number, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = start; i < end; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's finaliser: spreads every input bit over the output before we split it. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Counts of hashed features; the low two bits of a key hold its kind. */
function features(text: string): Map<number, number> {
  const norm = text.normalize("NFKC").toLowerCase();
  const words = norm.match(WORD) ?? norm.split(/\s+/).filter(Boolean);
  const counts = new Map<number, number>();
  const add = (hash: number, kind: number) => {
    const key = ((hash & ~3) | kind) >>> 0;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  let prev = -1;
  for (const word of words) {
    const w = fnv(word, 0, word.length, 0x9e37);
    add(w, KIND_WORD);
    if (prev >= 0) add(mix((Math.imul(prev, 31) + w) >>> 0), KIND_BIGRAM);
    prev = w;
    const marked = `<${word}>`;
    for (const n of [3, 4]) {
      for (let i = 0; i + n <= marked.length; i++) add(fnv(marked, i, i + n, n), KIND_CHARGRAM);
    }
  }
  return counts;
}

export function lexicalVector(text: string, dimensions: number): Float32Array {
  const vec = new Float32Array(dimensions);
  for (const [key, tf] of features(text)) {
    const m = mix(key);
    const sign = m & 1 ? 1 : -1;
    vec[(m >>> 1) % dimensions]! += sign * WEIGHTS[key & 3]! * (1 + Math.log(tf));
  }
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += vec[i]! * vec[i]!;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimensions; i++) vec[i]! *= inv;
  }
  return vec;
}

type Embedded = { vectors: Float32Array[]; tokens: number; truncated: number };

async function embedLexical(texts: string[], spec: ModelSpec, opts: EmbedOptions): Promise<Embedded> {
  const vectors: Float32Array[] = [];
  let tokens = 0;
  let truncated = 0;
  for (let i = 0; i < texts.length; i++) {
    // Yield now and then so a large batch does not hold the event loop for long.
    if (i > 0 && i % 512 === 0) await new Promise((r) => setImmediate(r));
    if (opts.signal?.aborted) throw opts.signal.reason;
    const text = truncateToTokens(texts[i]!, spec.maxTokens);
    if (text !== texts[i]) truncated++;
    tokens += estimateTokens(text);
    vectors.push(lexicalVector(text, opts.dimensions));
  }
  return { vectors, tokens, truncated };
}

export class LocalProvider implements EmbeddingProvider {
  readonly provider = "local" as const;
  readonly stats: EmbeddingStats = emptyStats();

  constructor(private readonly observer?: EmbeddingObserver) {}

  async embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const problems = validateModelChoice("local", opts.model, opts.dimensions);
    if (problems.length > 0) throw new DriverError(`local: ${problems.map((p) => p.message).join("; ")}`, { retryable: false });
    const spec = findModel("local", opts.model)!;
    const empty = texts.findIndex((t) => t.trim() === "");
    // Same rule as the hosted drivers, so callers see one behaviour.
    if (empty >= 0) throw new DriverError(`local: input ${empty} is empty`, { retryable: false });
    if (texts.length === 0) return [];
    let out: Embedded;
    try {
      out =
        spec.model === SEMANTIC_MODEL
          ? await embedSemantic(texts, { maxTokens: spec.maxTokens, kind: opts.kind, signal: opts.signal })
          : await embedLexical(texts, spec, opts);
    } catch (err) {
      count("local", this.stats, { requests: 1, failures: 1 });
      this.observer?.request({ provider: "local", model: spec.model, ok: false, status: null });
      throw err;
    }
    count("local", this.stats, { requests: 1, inputs: texts.length, tokens: out.tokens, truncated: out.truncated });
    // No network: one embed call is reported as one request, so dashboards read every provider alike.
    this.observer?.request({ provider: "local", model: spec.model, ok: true, status: null });
    this.observer?.tokens({ provider: "local", model: spec.model, tokens: out.tokens });
    return out.vectors;
  }
}
