// Token counting per model family, for batching by tokens per request, for the governor's token
// reservations and for truncation to max_tokens.
//
// - emb_a (OpenAI: text-embedding-3-small/-large, text-embedding-ada-002) tokenizes with
//   cl100k_base (js-tiktoken's ranks, merged by bpe-count.ts into js-tiktoken's own tokens):
//   counts are the provider's own and the cut lands on a token boundary at exactly max_tokens.
//   (An OpenAI-compatible server reached through the base URL override may count differently; it
//   then gets OpenAI's count, the best we know.)
// - emb_b (Vertex/Gemini, SentencePiece) and emb_c (Voyage, published on the Hugging Face hub
//   only) have no tokenizer on npm that we trust to match the provider, so they keep the
//   conservative estimate of tokens.ts; both providers also truncate server-side.
//
// The cl100k_base ranks are a ~1 MB JS module that takes ~150 ms to import and ~70 ms more to
// build bpe-count.ts's rank map: loaded lazily, once per process, on the first emb_a call.
import { BpeCounter, type Walk } from "./bpe-count.ts";
import type { ProviderName } from "./catalog.ts";
import { cutToBytes, estimateTokens, truncateToTokens, utf8Length } from "./tokens.ts";

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

// A byte-pair merge is quadratic in the bytes of one regex piece (a run of letters, of other
// symbols or of spaces): js-tiktoken took 0.2 ms for 64 letters, 0.3 s for 2,000, 45 s for 16,000.
// A text holding a piece with a run this long is not merged; it is cut and counted by the strict
// bound of one token per UTF-8 byte instead (an over-count, never an overrun).
const LONG_RUN_CHARS = 40;
const LONG_RUN = new RegExp(`\\p{L}{${LONG_RUN_CHARS},}|[^\\s\\p{L}\\p{N}]{${LONG_RUN_CHARS},}|\\s{${LONG_RUN_CHARS},}`, "u");
const longRun = (piece: string) => piece.length >= LONG_RUN_CHARS && LONG_RUN.test(piece);

/**
 * The most UTF-8 bytes one cl100k_base token spans among tokens without such a run (the longest is
 * 16 em dashes; with runs, 128 spaces): a text walked token by token holds at most this many bytes
 * a token. Checked against the vocabulary by test/drivers/embeddings/tokenizer.test.ts.
 */
export const CL100K_MAX_TOKEN_BYTES = 48;
/**
 * How far past its end the split regex reads to match a piece: to the end of a run of blanks
 * (under 80 code units when no piece is a long run) and one more. Pieces ending further than
 * this before a cut split the same in the cut text.
 */
const LOOKAHEAD_UNITS = 128;
/**
 * Past `maxTokens` tokens of at most CL100K_MAX_TOKEN_BYTES each, the piece that passes the limit
 * and the regex's look past it: a text longer than this in bytes cannot fit, and its cut is the
 * cut of its first this-many bytes. So every text is cut to this before it is counted: a 1 MiB
 * input costs what its first ~400 KB cost (its first ~8,192 tokens, in fact: the walk stops there).
 */
const maxBytesFor = (maxTokens: number) => maxTokens * CL100K_MAX_TOKEN_BYTES + 1024;

function byteBound(text: string, maxTokens: number): FittedInput {
  const cut = cutToBytes(text, maxTokens); // ≥ 1 byte a token
  return { text: cut, tokens: utf8Length(cut) };
}

/** How many of the ascending `sorted` are at most `x`. */
function atMost(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

class Cl100kCounter implements TokenCounter {
  readonly exact = true;
  constructor(private readonly counter: BpeCounter) {}

  fit(text: string, maxTokens: number): FittedInput {
    // One count per input is the floor: batches and the governor's reservations use the exact
    // count (bpe-count.ts, 3× js-tiktoken's encode). The walk stops at the piece that passes the
    // limit, so an input over it costs no more than its first maxTokens tokens, and the cut
    // re-reads only the pieces it ends in.
    const bounded = cutToBytes(text, maxBytesFor(maxTokens));
    // Lone surrogates are U+FFFD on the wire (UTF-8): cut in the text as it is sent.
    const sent = bounded.isWellFormed() ? bounded : bounded.toWellFormed();
    const walk = this.counter.walk(sent, maxTokens, longRun);
    if (walk === null) return byteBound(sent, maxTokens);
    if (walk.tokens <= maxTokens) return { text: bounded, tokens: walk.tokens };
    return this.cut(sent, walk, maxTokens);
  }

  /**
   * The longest token-boundary prefix of `text` that re-encodes to at most `maxTokens` tokens.
   * A prefix can re-encode differently at its end (a word cut in two merges anew), and a cut
   * inside a multi-byte character is no prefix, so each candidate is checked.
   */
  private cut(text: string, walk: Walk, maxTokens: number): FittedInput {
    let n = maxTokens;
    while (n > 0) {
      // Token n ends in piece p: all of it, or `kept` of its tokens.
      const p = atMost(walk.totals, n - 1);
      const start = walk.starts[p]!;
      const end = walk.starts[p + 1]!;
      const kept = n - (p === 0 ? 0 : walk.totals[p - 1]!);
      let candidate = text.slice(0, end);
      if (n < walk.totals[p]!) {
        const bytes = Buffer.from(text.slice(start, end), "utf8");
        const at = this.counter.tokenEnds(text.slice(start, end))[kept - 1]!;
        if ((bytes[at]! & 0xc0) === 0x80) {
          n--; // ends inside a character
          continue;
        }
        candidate = text.slice(0, start) + bytes.subarray(0, at).toString("utf8");
      }
      const count = this.recount(candidate, walk);
      if (count <= maxTokens) return { text: candidate, tokens: count };
      n -= count - maxTokens;
    }
    // Unreachable for maxTokens ≥ 1 (one token is at most one character); kept total.
    return { text: "", tokens: 0 };
  }

  /** The count of a prefix of the walked text: the pieces ending well before its end as walked, the rest counted anew. */
  private recount(prefix: string, walk: Walk): number {
    // Pieces 0 … j-1 end by `stable` (starts[j] is where piece j-1 ends).
    const j = atMost(walk.starts, prefix.length - LOOKAHEAD_UNITS) - 1;
    if (j <= 0) return this.counter.count(prefix);
    return walk.totals[j - 1]! + this.counter.count(prefix.slice(walk.starts[j]!));
  }
}

let cl100k: Promise<TokenCounter> | null = null;

function loadCl100k(): Promise<TokenCounter> {
  cl100k ??= import("js-tiktoken/ranks/cl100k_base").then(
    (ranks) => new Cl100kCounter(new BpeCounter(ranks.default)),
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
