// Token counting without a tokenizer: a conservative estimate, so batches never overrun a
// provider's per-request token ceiling and client-side truncation never leaves an input over
// max_tokens. BPE tokenizers of all three providers average 3.5–4.5 UTF-8 bytes per token on
// English and about 3 bytes per token on CJK; one token per 3 bytes over-counts all of them.
// emb_a counts exactly with cl100k_base instead (tokenizer.ts); emb_b, emb_c and local use this
// estimate, as no tokenizer for their families on npm is one we trust to match the provider.

const encoder = new TextEncoder();
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
 * Cuts `text` so its estimate is at most `maxTokens`, on a code-point boundary. Texts already
 * within the limit come back unchanged (the same string).
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  const maxBytes = maxTokens * BYTES_PER_TOKEN;
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text;
  const bytes = encoder.encode(text);
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return new TextDecoder().decode(bytes.subarray(0, end));
}
