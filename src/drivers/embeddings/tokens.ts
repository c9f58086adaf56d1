// Token counting without a tokenizer: a conservative estimate, so batches never overrun a
// provider's per-request token ceiling and client-side truncation never leaves an input over
// max_tokens. BPE tokenizers of all three providers average 3.5–4.5 UTF-8 bytes per token on
// English and about 3 bytes per token on CJK; one token per 3 bytes over-counts all of them.
// emb_a counts exactly with cl100k_base instead (tokenizer.ts); emb_b, emb_c and local use this
// estimate, as no tokenizer for their families on npm is one we trust to match the provider.

export const BYTES_PER_TOKEN = 3;

export function utf8Length(text: string): number {
  // Fast path: ASCII strings are one byte per code unit.
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      bytes += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(utf8Length(text) / BYTES_PER_TOKEN));
}

/**
 * The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, cut between characters (a
 * surrogate pair is one 4-byte character, a lone surrogate the 3 bytes of U+FFFD that encoding
 * gives it). `text` itself, the same string, when within. Costs O(maxBytes) whatever the text's
 * length: every code unit is at least one byte, so the cut lies within the first `maxBytes` units.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes > maxBytes) return text.slice(0, i);
    if (pair) i++;
  }
  return text;
}

/**
 * Cuts `text` so its estimate is at most `maxTokens`, on a code-point boundary. Texts already
 * within the limit come back unchanged (the same string).
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  return cutToBytes(text, maxTokens * BYTES_PER_TOKEN);
}
