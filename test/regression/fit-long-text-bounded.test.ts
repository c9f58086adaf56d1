// Regression: `fit()` counted a whole text and, when it was over the limit, encoded the whole text
// again with js-tiktoken before cutting it: 1 MiB of 39-letter words took 5-8 s for emb_a (8-12 s
// in Cyrillic), all of it on the event loop, for a query or a source row alike. Every text is now
// cut first to the most bytes `maxTokens` tokens can span, and the count stops at the piece that
// passes the limit: 1 MiB costs what its first 8,191 tokens cost, with the same cut as before.
import { describe, expect, test } from "bun:test";
import { getEncoding } from "js-tiktoken";
import { tokenCounterFor } from "../../src/drivers/embeddings/tokenizer.ts";
import { estimateTokens } from "../../src/drivers/embeddings/tokens.ts";

const reference = getEncoding("cl100k_base");
const MAX_TOKENS = 8191;
const MiB = 1 << 20;

/** Random 39-letter words (the slowest text for a byte-pair merge short of a long run), `bytes` of UTF-8 or a little more. */
function words(bytes: number, alphabet: string): string {
  let x = 7;
  const out: string[] = [];
  for (let n = 0; n < bytes; ) {
    let word = "";
    for (let i = 0; i < 39; i++) word += alphabet[(x = (x * 1103515245 + 12345) & 0x7fffffff) % alphabet.length];
    out.push(word);
    n += Buffer.byteLength(word) + 1;
  }
  return out.join(" ");
}

const TEXTS = {
  ascii: words(MiB, "abcdefghijklmnopqrstuvwxyz"),
  cyrillic: words(MiB, "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"),
};

describe.each(["emb_a", "emb_b", "emb_c", "local"] as const)("happy: %s", (provider) => {
  test.each(Object.keys(TEXTS) as (keyof typeof TEXTS)[])("1 MiB of %s 39-letter words fits within 50 ms, cut as a normal text is", async (name) => {
    const counter = await tokenCounterFor(provider);
    const text = TEXTS[name];
    expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(MiB);
    // A normal text: 64 KiB, already more than the limit in every model family's count.
    const normal = counter.fit(text.slice(0, 64 * 1024), MAX_TOKENS);
    const started = performance.now();
    const fitted = counter.fit(text, MAX_TOKENS);
    const ms = performance.now() - started;
    expect(fitted).toEqual(normal);
    expect(ms).toBeLessThan(50);
    if (counter.exact) {
      expect(fitted.tokens).toBe(MAX_TOKENS);
      expect(reference.encode(fitted.text, [], []).length).toBe(MAX_TOKENS);
    } else expect(fitted.tokens).toBe(estimateTokens(fitted.text));
    expect(text.startsWith(fitted.text)).toBe(true);
  });
});
