// Exact token counting for emb_a (cl100k_base through js-tiktoken): the cut at max_tokens, batches
// under the per-request ceiling and the governor's reservations, all by tiktoken's own count, read
// from a separate js-tiktoken encoder. emb_b and emb_c keep the conservative estimate.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { getEncoding } from "js-tiktoken";
import { findModel } from "../../../src/drivers/embeddings/catalog.ts";
import { governorFor } from "../../../src/drivers/embeddings/governor.ts";
import ranks from "js-tiktoken/ranks/cl100k_base";
import { CL100K_MAX_TOKEN_BYTES, fitInputs, tokenCounterFor } from "../../../src/drivers/embeddings/tokenizer.ts";
import { estimateTokens } from "../../../src/drivers/embeddings/tokens.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { FAST, texts } from "./subjects.ts";
import { createEmbeddingProvider } from "../../../src/drivers/embeddings/index.ts";

const reference = getEncoding("cl100k_base");
const tiktokens = (text: string) => reference.encode(text, [], []).length;
const MODEL = "text-embedding-3-small";
const MAX_TOKENS = findModel("emb_a", MODEL)!.maxTokens; // 8191
const embed = { model: MODEL, dimensions: 256, kind: "document" } as const;
/** The runs that make a text bounded by its bytes instead of encoded (tokenizer.ts LONG_RUN). */
const LONG_RUN = /\p{L}{40,}|[^\s\p{L}\p{N}]{40,}|\s{40,}/u;

// Inputs whose cl100k_base count sits on both sides of the 3-bytes-per-token estimate.
const MIXED = [
  "lorem ipsum dolor sit amet ",
  "0123456789 ",
  "row 31, qty 7.25; sku=AB-193 ",
  "Größe 12,5 € naïve café ",
  "日本語のテキスト ",
  "emoji 😀🎉 <|endoftext|> ",
];

describe("happy", () => {
  let fake: FakeEmbeddings;
  beforeEach(async () => {
    fake = await startFakeEmbeddings("emb_a");
  });
  afterEach(async () => {
    await fake.stop();
  });
  const driver = (tuning = {}) => createEmbeddingProvider({ provider: "emb_a", apiKey: fake.apiKey, baseUrl: fake.url, tuning: { ...FAST, ...tuning } });

  test("the OpenAI family counts with cl100k_base, loaded once; the others estimate", async () => {
    const first = tokenCounterFor("emb_a");
    expect(tokenCounterFor("emb_a")).toBe(first); // one load per process
    expect((await first).exact).toBe(true);
    expect((await tokenCounterFor("emb_b")).exact).toBe(false);
    expect((await tokenCounterFor("emb_c")).exact).toBe(false);
    const counter = await first;
    for (const unit of MIXED) expect(counter.fit(unit, MAX_TOKENS)).toEqual({ text: unit, tokens: tiktokens(unit) });
  });

  test("a long input is cut at a token boundary to exactly max_tokens", async () => {
    const counter = await tokenCounterFor("emb_a");
    for (const unit of MIXED) {
      const long = unit.repeat(Math.ceil(60_000 / unit.length));
      const { text, tokens } = counter.fit(long, MAX_TOKENS);
      expect(tiktokens(text)).toBe(MAX_TOKENS);
      expect(tokens).toBe(MAX_TOKENS);
      expect(long.startsWith(text)).toBe(true);
    }
  });

  test("the driver sends the exact cut, and an input of exactly max_tokens uncut", async () => {
    const counter = await tokenCounterFor("emb_a");
    // Numbers keep the fake (4 bytes per token) from over-counting the cut: see contract.test.ts.
    const long = "lorem 1234 ipsum 5678 ".repeat(5_000);
    const exactly = counter.fit(long, MAX_TOKENS).text;
    expect(tiktokens(exactly)).toBe(MAX_TOKENS);
    const oneMore = counter.fit(long, MAX_TOKENS + 1).text;
    expect(tiktokens(oneMore)).toBe(MAX_TOKENS + 1);
    await driver({ maxInputsPerRequest: 1 }).embed([long, exactly, oneMore], embed);
    const sent = fake.requests.map((r) => r.decoded!.texts[0]!).sort((a, b) => a.length - b.length);
    expect(sent.map(tiktokens)).toEqual([MAX_TOKENS, MAX_TOKENS, MAX_TOKENS]);
    expect(sent.filter((t) => t === exactly)).toHaveLength(3); // all three cut to the same prefix
    expect(fake.requests.every((r) => r.status === 200)).toBe(true);
  });

  test("batches never exceed the per-request token ceiling by tiktoken's count", async () => {
    const ceiling = 40;
    const input = Array.from({ length: 60 }, (_, i) => MIXED[i % MIXED.length]!.repeat(1 + (i % 2)) + i); // each under the ceiling
    await driver({ maxTokensPerRequest: ceiling, concurrency: 1 }).embed(input, embed);
    const sent = fake.requests.map((r) => r.decoded!.texts);
    const sums = sent.map((b) => b.reduce((n, t) => n + tiktokens(t), 0));
    expect(Math.max(...sums)).toBeLessThanOrEqual(ceiling);
    // Filled greedily by the exact count: the next input would not have fitted.
    for (let i = 0; i + 1 < sent.length; i++) expect(sums[i]! + tiktokens(sent[i + 1]![0]!)).toBeGreaterThan(ceiling);
    expect(sent.flat()).toEqual(input); // concurrency 1: sent in order, each once
    // The estimate would have under-counted some of these inputs (and over-counted others).
    expect(input.some((t) => estimateTokens(t) < tiktokens(t))).toBe(true);
  });

  test("the governor reserves the exact count for emb_a", async () => {
    // The driver shares the process's governor for this key; recording what it asks for.
    const governor = governorFor("emb_a", fake.url, fake.apiKey, FAST.rateLimits!);
    const reserved: number[] = [];
    const acquire = governor.acquire.bind(governor);
    governor.acquire = (tokens, priority, signal) => (reserved.push(tokens), acquire(tokens, priority, signal));
    const input = [...texts(12), ...MIXED];
    await driver({ maxInputsPerRequest: 6 }).embed(input, embed);
    const perBatch = fake.requests.map((r) => r.decoded!.texts.reduce((n, t) => n + tiktokens(t), 0));
    const byValue = (a: number, b: number) => a - b;
    expect(reserved.sort(byValue)).toEqual(perBatch.sort(byValue));
    expect(reserved.reduce((a, b) => a + b, 0)).toBe(input.reduce((n, t) => n + tiktokens(t), 0));
    expect(reserved.reduce((a, b) => a + b, 0)).not.toBe(input.reduce((n, t) => n + estimateTokens(t), 0));
  });

  test("a text with a long unbroken run is bounded by its bytes instead of encoded", async () => {
    // js-tiktoken takes ~45 s on a 16,000-letter run (quadratic merge); the bound takes microseconds.
    const counter = await tokenCounterFor("emb_a");
    let x = 7;
    const letters = Array.from({ length: 20_000 }, () => String.fromCharCode(97 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 26))).join("");
    const started = performance.now();
    const long = counter.fit(letters, MAX_TOKENS);
    expect(performance.now() - started).toBeLessThan(100);
    expect(Buffer.byteLength(long.text)).toBeLessThanOrEqual(MAX_TOKENS); // ≥ 1 byte per token
    expect(long.tokens).toBe(Buffer.byteLength(long.text));
    const short = `a hash: ${letters.slice(0, 60)}`;
    expect(counter.fit(short, MAX_TOKENS)).toEqual({ text: short, tokens: Buffer.byteLength(short) });
    expect(Buffer.byteLength(short)).toBeGreaterThanOrEqual(tiktokens(short)); // an over-count
  });

  test("no cl100k_base token without a 40-character run spans more bytes than the byte bound assumes", () => {
    // The bound every text is cut to before it is counted (tokenizer.ts maxBytesFor) rests on it.
    let longest = 0;
    for (const line of ranks.bpe_ranks.split("\n")) {
      for (const token of line.split(" ").slice(2)) {
        const bytes = Buffer.from(token, "base64");
        if (!LONG_RUN.test(bytes.toString("utf8"))) longest = Math.max(longest, bytes.length);
      }
    }
    expect(longest).toBe(CL100K_MAX_TOKEN_BYTES);
  });

  test("a cut lands where it did when the whole text was encoded, in texts of every kind", async () => {
    // Pieces of every class of the split pattern: words, numbers, symbols, blanks and newlines, contractions, non-ASCII.
    const counter = await tokenCounterFor("emb_a");
    const units = ["lorem ", "ipsum", " ", "  ", "\n", "\n\n", "\t", "0123", "4567890", "—", "é", "日本語", "😀", "<|endoftext|>", "'s", "'ll ", "!!", "...", "Größe", "𝐀𝐁", "   word", "====", "-".repeat(10), " ".repeat(12)];
    let x = 3;
    const pick = (n: number) => (x = (x * 1103515245 + 12345) & 0x7fffffff) % n;
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      const text = Array.from({ length: 50 + pick(400) }, () => units[pick(units.length)]!).join("");
      if (LONG_RUN.test(text)) continue; // bounded by its bytes instead: the test above
      const tokens = reference.encode(text, [], []);
      for (const max of [1, 7, 64, 300]) {
        const { text: cut, tokens: count } = counter.fit(text, max);
        if (tokens.length <= max) expect({ cut, count }).toEqual({ cut: text, count: tokens.length });
        expect(text.startsWith(cut)).toBe(true);
        expect(reference.encode(cut, [], []).length).toBe(count);
        expect(count).toBeLessThanOrEqual(max);
        // The longest such prefix: one token more of the text's own encoding would not fit.
        if (cut !== text) expect(reference.encode(reference.decode(tokens.slice(0, count + 1)), [], []).length).toBeGreaterThan(max);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });

  test("fitInputs keeps order and leaves short inputs untouched", async () => {
    const counter = await tokenCounterFor("emb_a");
    const input = texts(5);
    const fitted = await fitInputs(counter, input, MAX_TOKENS, async () => {});
    expect(fitted.texts).toEqual(input);
    expect(fitted.tokens).toEqual(input.map(tiktokens));
  });

  test("fitInputs gives the event loop turns within a long list, and counts the same", async () => {
    const counter = await tokenCounterFor("emb_a");
    // ~200-byte rows like a backfill's: hex runs are slow to encode (~30-50 µs each).
    const input = Array.from({ length: 2_000 }, (_, i) => `Item ${i}: ${createHash("md5").update(String(i)).digest("hex").repeat(3)}`);
    let pauses = 0;
    let longest = 0;
    let last = performance.now();
    const fitted = await fitInputs(counter, input, MAX_TOKENS, async () => {
      pauses++;
      longest = Math.max(longest, performance.now() - last);
      await new Promise((r) => setImmediate(r));
      last = performance.now();
    });
    expect(fitted.tokens).toEqual(input.map(tiktokens));
    expect(pauses).toBeGreaterThan(0);
    // A slice ends once past 3 ms; one input more is at most a few ms even on a loaded machine.
    expect(longest).toBeLessThan(50);
  });
});
