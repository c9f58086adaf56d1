// Token counting per model family, for batching by tokens per request, for the governor's token
// reservations and for truncation to max_tokens.
//
// - emb_a (OpenAI: text-embedding-3-small/-large, text-embedding-ada-002) tokenizes with
//   cl100k_base, which js-tiktoken implements exactly: counts are the provider's own and the cut
//   lands on a token boundary at exactly max_tokens. (An OpenAI-compatible server reached through
//   the base URL override may count differently; it then gets OpenAI's count, the best we know.)
// - emb_b (Vertex/Gemini, SentencePiece) and emb_c (Voyage, published on the Hugging Face hub
//   only) have no tokenizer on npm that we trust to match the provider, so they keep the
//   conservative estimate of tokens.ts; both providers also truncate server-side.
//
// The cl100k_base ranks are a ~1 MB JS module that takes ~150 ms to import and another ~150 ms
// to build the rank maps (js-tiktoken's for the cut, ~70 ms more for bpe-count.ts's): loaded
// lazily, once per process, on the first emb_a call.
import type { Tiktoken } from "js-tiktoken/lite";
import { BpeCounter } from "./bpe-count.ts";
import type { ProviderName } from "./catalog.ts";
import { BYTES_PER_TOKEN, estimateTokens, truncateToTokens, utf8Length } from "./tokens.ts";

/** An input ready to send: cut to the limit, with its token count. */
export type FittedInput = { text: string; tokens: number };

export interface TokenCounter {
  /** Whether counts are the provider's own (true) or a conservative over-estimate. */
  readonly exact: boolean;
  /** Cuts `text` to at most `maxTokens` tokens (unchanged when within) and counts it. */
  fit(text: string, maxTokens: number): FittedInput;
}

const estimating: TokenCounter = {
  exact: false,
  fit(text, maxTokens) {
    const cut = truncateToTokens(text, maxTokens);
    return { text: cut, tokens: estimateTokens(cut) };
  },
};

// js-tiktoken's byte-pair merge is quadratic in the bytes of one regex piece (a run of letters,
// of other symbols or of spaces): measured 0.2 ms for 64 letters, 0.3 s for 2,000, 45 s for 16,000.
// A text holding a run this long is not encoded; it is cut and counted by the strict bound of one
// token per UTF-8 byte instead (an over-count, never an overrun). Shorter texts cannot hold one.
const LONG_RUN_CHARS = 40;
const LONG_RUN = new RegExp(`\\p{L}{${LONG_RUN_CHARS},}|[^\\s\\p{L}\\p{N}]{${LONG_RUN_CHARS},}|\\s{${LONG_RUN_CHARS},}`, "u");

function byteBound(text: string, maxTokens: number): FittedInput {
  const cut = truncateToTokens(text, Math.floor(maxTokens / BYTES_PER_TOKEN)); // maxTokens bytes
  return { text: cut, tokens: utf8Length(cut) };
}

// Special-token strings such as "<|endoftext|>" in user data are plain text to the embeddings
// API; js-tiktoken's default would throw on them.
const NO_SPECIAL: string[] = [];

class Cl100kCounter implements TokenCounter {
  readonly exact = true;
  constructor(
    private readonly bpe: Tiktoken,
    private readonly counter: BpeCounter,
  ) {}

  count(text: string): number {
    return this.counter.count(text);
  }

  fit(text: string, maxTokens: number): FittedInput {
    // One count per input is the floor: batches and the governor's reservations use the exact
    // count (bpe-count.ts, 3× js-tiktoken's encode). Only inputs over the limit pay for the cut
    // (encode, decode, re-count).
    if (text.length >= LONG_RUN_CHARS && LONG_RUN.test(text)) return byteBound(text, maxTokens);
    const tokens = this.count(text);
    if (tokens <= maxTokens) return { text, tokens };
    return this.cut(text, this.bpe.encode(text, NO_SPECIAL, NO_SPECIAL), maxTokens);
  }

  /**
   * The longest token-boundary prefix of `text` that re-encodes to at most `maxTokens` tokens.
   * A prefix can re-encode differently at its end (a word cut in two merges anew), and a cut
   * inside a multi-byte character decodes to U+FFFD, so each candidate is checked.
   */
  private cut(text: string, tokens: number[], maxTokens: number): FittedInput {
    let n = maxTokens;
    while (n > 0) {
      const candidate = this.bpe.decode(tokens.slice(0, n));
      if (!text.startsWith(candidate)) {
        n--; // ends inside a character
        continue;
      }
      const count = this.count(candidate);
      if (count <= maxTokens) return { text: candidate, tokens: count };
      n -= count - maxTokens;
    }
    // Unreachable for maxTokens ≥ 1 (one token is at most one character); kept total.
    return { text: "", tokens: 0 };
  }
}

let cl100k: Promise<TokenCounter> | null = null;

function loadCl100k(): Promise<TokenCounter> {
  cl100k ??= Promise.all([import("js-tiktoken/lite"), import("js-tiktoken/ranks/cl100k_base")]).then(
    ([{ Tiktoken }, ranks]) => new Cl100kCounter(new Tiktoken(ranks.default), new BpeCounter(ranks.default)),
    (err: unknown) => {
      cl100k = null; // a later call may try again
      throw err;
    },
  );
  return cl100k;
}

/** The token counter for a provider's models (loads the tokenizer on first use). */
export function tokenCounterFor(provider: ProviderName): Promise<TokenCounter> {
  return provider === "emb_a" ? loadCl100k() : Promise.resolve(estimating);
}

/**
 * Encoding with cl100k_base costs ~30-50 µs an input (a backfill's ~200-byte rows): a page of 256
 * held the event loop ~10 ms, 1,000 inputs ~40 ms, and every search waited behind it. So inputs are
 * counted in slices of about this long, with a turn of the loop between them (`pause`).
 */
const FIT_SLICE_MS = 3;

/** Cuts every input to `maxTokens` and counts it, in input order, pausing between slices. */
export async function fitInputs(counter: TokenCounter, texts: readonly string[], maxTokens: number, pause: () => Promise<void>): Promise<{ texts: string[]; tokens: number[] }> {
  const out = { texts: new Array<string>(texts.length), tokens: new Array<number>(texts.length) };
  let sliceStart = performance.now();
  for (let i = 0; i < texts.length; i++) {
    const fitted = counter.fit(texts[i]!, maxTokens);
    out.texts[i] = fitted.text;
    out.tokens[i] = fitted.tokens;
    if (counter.exact && i + 1 < texts.length && performance.now() - sliceStart > FIT_SLICE_MS) {
      await pause();
      sliceStart = performance.now();
    }
  }
  return out;
}
