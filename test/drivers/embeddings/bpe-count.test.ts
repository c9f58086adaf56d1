// bpe-count.ts counts cl100k_base tokens without building them; its counts must be js-tiktoken's
// own (the reference the provider's counts were checked against, tokenizer.test.ts), on every kind
// of text a table may hold: each piece class of the split pattern, multi-byte characters, pieces
// the vocabulary lacks (merged pair by pair), and special-token strings, which count as plain text.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { getEncoding } from "js-tiktoken";
import ranks from "js-tiktoken/ranks/cl100k_base";
import { BpeCounter } from "../../../src/drivers/embeddings/bpe-count.ts";

const reference = getEncoding("cl100k_base");
const tiktokens = (text: string) => reference.encode(text, [], []).length;
const counter = new BpeCounter(ranks);

const FRAGMENTS = [
  "the", " quick", "brown", "fox", "'s", "'LL", "don't", "naïve", "Größe", "café", "日本語", "東京", "😀", "🎉", "Ω≈ç√",
  "0", "12", "123", "4567", "7.25", "-", "--", "...", "!?", "(", "){", "\n", "\r\n", "\n\n", " ", "  ", "\t", "    ",
  "<|endoftext|>", "<|fim_prefix|>", "xqzv", "Zzyzx", "supercalifragilistic", "ünïcödé", "ÆØÅ", "ı", "ß", "\u00a0", "\u200b",
];

test("counts equal js-tiktoken's on random compositions of every kind of piece", () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 8 })), { maxLength: 40 }), (parts) => {
      const text = parts.join("");
      expect(counter.count(text)).toBe(tiktokens(text));
    }),
    { numRuns: 2000 },
  );
});

test("known counts: empty, a special-token string as text, and a piece merged from single bytes", () => {
  expect(counter.count("")).toBe(0);
  expect(counter.count("<|endoftext|>")).toBe(tiktokens("<|endoftext|>"));
  expect(counter.count("<|endoftext|>")).toBeGreaterThan(1);
  expect(counter.count("hello world")).toBe(2);
  const rare = "\u{1F9EC}\u{1FAE0}"; // emoji outside the vocabulary's whole pieces
  expect(counter.count(rare)).toBe(tiktokens(rare));
});
