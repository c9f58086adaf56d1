// The embedding driver contract: one set of behaviours, run against emb_a, emb_b and emb_c (each
// against its fake server) and the local provider's two models. Skips are declared in subjects.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { DriverError } from "../../../src/shared/errors.ts";
import { lexicalVector } from "../../../src/drivers/embeddings/local.ts";
import { fakeVector } from "../../fakes/embeddings/upstream.ts";
import { SUBJECTS, texts, world, type World } from "./subjects.ts";

async function driverError(p: Promise<unknown>): Promise<DriverError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(DriverError);
  return err as DriverError;
}

describe.each(SUBJECTS)("$provider $model", (s) => {
  let w: World;
  beforeEach(async () => {
    w = await world(s);
  });
  afterEach(async () => {
    await w.fake?.stop();
  });
  // A behaviour a subject does not have is not registered for it at all (CI runs no skipped
  // tests); subjects.ts states each omission and why (STYLE 7).
  const absent = Object.assign(() => {}, { each: () => () => {} }) as unknown as typeof test;
  const onlyIf = (applies: boolean) => (applies ? test : absent);
  const http = onlyIf(s.skips.http === undefined);
  const kinds = onlyIf(s.skips.kinds === undefined && s.skips.http === undefined);
  const serverCut = onlyIf(s.skips["server-truncation"] === undefined);
  const base64 = onlyIf(s.skips.base64 === undefined);
  const expected = (text: string, dims: number, kind: "document" | "query" = "document") =>
    s.provider === "local" ? Array.from(lexicalVector(text, dims)) : fakeVector(s.upstreamId, s.wireKind[kind], text, dims);
  const close = (got: Float32Array, want: number[]) => {
    expect(got.length).toBe(want.length);
    for (let i = 0; i < want.length; i += 37) expect(got[i]!).toBeCloseTo(want[i]!, 5);
  };

  describe("happy", () => {
    test("keeps the order of inputs across batches answered out of order", async () => {
      w.fake?.set({ shuffle: true, latencyJitterMs: 15 });
      const input = texts(40);
      const out = await w.driver({ maxInputsPerRequest: 3, concurrency: 6 }).embed(input, { model: s.model, dimensions: s.reducedDims, kind: "document" });
      expect(out).toHaveLength(40);
      const want = s.alone ? await Promise.all(input.map((t) => s.alone!(t, s.reducedDims))) : input.map((t) => expected(t, s.reducedDims));
      input.forEach((_, i) => close(out[i]!, want[i]!));
    });

    test("an empty list costs nothing", async () => {
      expect(await w.driver().embed([], { model: s.model, dimensions: s.dims, kind: "document" })).toEqual([]);
      expect(w.fake?.requests ?? []).toHaveLength(0);
    });

    http("no request exceeds the inputs or tokens per request", async () => {
      // The fake answers 400 past these; a token ceiling only where it counts as the driver does
      // (subjects.ts); the sent batches are checked by the driver's count either way.
      w.fake!.set({ maxInputs: 5, maxRequestTokens: s.fakeCountsLikeDriver ? 60 : null });
      const input = texts(30).map((t, i) => t + " padding".repeat(i % 5));
      await w.driver({ maxInputsPerRequest: 5, maxTokensPerRequest: 60 }).embed(input, { model: s.model, dimensions: s.dims, kind: "document" });
      const sent = w.fake!.requests.map((r) => r.decoded!.texts);
      expect(sent.every((b) => b.length <= 5)).toBe(true);
      expect(sent.every((b) => b.reduce((n, t) => n + s.tokens(t), 0) <= 60)).toBe(true);
      expect(sent.flat().sort()).toEqual([...input].sort()); // every input sent once (arrival order varies)
      expect(w.fake!.requests.every((r) => r.status === 200)).toBe(true);
    });

    http("asks the provider for reduced dimensions and sends none at full size where optional", async () => {
      const d = w.driver();
      const reduced = await d.embed(["alpha"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      expect(s.dimsField!(w.fake!.requests[0]!.body)).toBe(s.reducedDims);
      close(reduced[0]!, expected("alpha", s.reducedDims)); // the provider's vector, not a cut one
      await d.embed(["alpha"], { model: s.model, dimensions: s.dims, kind: "document" });
      const atFull = s.dimsField!(w.fake!.requests[1]!.body);
      expect(atFull === undefined || atFull === s.dims).toBe(true);
    });

    test("an unsupported size is refused before any request", async () => {
      const err = await driverError(w.driver().embed(["x"], { model: s.model, dimensions: s.badDims, kind: "document" }));
      expect(err.retryable).toBe(false);
      expect(err.message).toContain(String(s.badDims));
      expect(w.fake?.requests ?? []).toHaveLength(0);
    });

    test("an empty input is refused before any request", async () => {
      const err = await driverError(w.driver().embed(["a", " "], { model: s.model, dimensions: s.dims, kind: "document" }));
      expect(err.retryable).toBe(false);
      expect(w.fake?.requests ?? []).toHaveLength(0);
    });

    test("cuts an over-long input instead of failing", async () => {
      // ~440 kB, far past every max_tokens. Numbers keep cl100k_base at under 4 bytes per token,
      // so emb_a's fake (4 bytes per token) accepts an exact cut at max_tokens; on plain English
      // (~6 bytes per token) it would wrongly reject it. The exact cut: tokenizer.test.ts.
      const long = "lorem 1234 ipsum 5678 ".repeat(20_000);
      const out = await w.driver().embed([long, "short"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      expect(out).toHaveLength(2);
      if (w.fake) {
        // emb_a's fake answers 400 past 8,192 tokens, so 200 means the cut was deep enough.
        expect(w.fake.requests.every((r) => r.status === 200)).toBe(true);
        const sent = w.fake.requests[0]!.decoded!.texts[0]!;
        expect(sent.length).toBeLessThan(long.length);
        expect(long.startsWith(sent)).toBe(true);
      }
    });

    serverCut("leaves the exact cut to the provider and turns its truncation on", async () => {
      await w.driver().embed(["lorem ipsum ".repeat(10_000)], { model: s.model, dimensions: s.dims, kind: "document" });
      const body = w.fake!.requests[0]!.body;
      expect(body.truncation ?? (body.parameters as Record<string, unknown>).autoTruncate).toBe(true);
    });

    kinds("embeds documents as documents and queries as queries", async () => {
      const d = w.driver();
      const [doc] = await d.embed(["same text"], { model: s.model, dimensions: s.dims, kind: "document" });
      const [query] = await d.embed(["same text"], { model: s.model, dimensions: s.dims, kind: "query" });
      expect(w.fake!.requests.map((r) => r.decoded!.kind)).toEqual([s.wireKind.document, s.wireKind.query]);
      close(query!, expected("same text", s.dims, "query"));
      expect(Array.from(doc!)).not.toEqual(Array.from(query!));
    });

    test("counts inputs and tokens", async () => {
      const d = w.driver({ maxInputsPerRequest: 4 });
      await d.embed(texts(10), { model: s.model, dimensions: s.dims, kind: "document" });
      expect(d.stats.inputs).toBe(10);
      expect(d.stats.tokens).toBeGreaterThan(0);
      if (w.fake) {
        expect(d.stats.requests).toBe(3);
        expect(d.stats.tokens).toBe(w.fake.counters.tokens); // the provider's own count
      }
    });
  });

  describe("errors", () => {
    http("retries 5xx, timeouts and 429 without Retry-After, then succeeds", async () => {
      w.fake!.set({ fail5xx: 2, hang: 1, fail429: 1, retryAfterSec: null });
      const d = w.driver({ timeoutMs: 200, retry: { maxAttempts: 6, baseDelayMs: 5, maxDelayMs: 20 } });
      const out = await d.embed(["a", "b"], { model: s.model, dimensions: s.dims, kind: "document" });
      expect(out).toHaveLength(2);
      expect(d.stats.retries).toBe(4);
      expect(d.stats.rateLimited).toBe(1);
    });

    http("waits as long as Retry-After says", async () => {
      w.fake!.set({ fail429: 1, retryAfterSec: 1 });
      await w.driver().embed(["a"], { model: s.model, dimensions: s.dims, kind: "document" });
      const [first, second] = w.fake!.requests;
      expect(first!.status).toBe(429);
      expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(950);
    });

    http("gives up after the last attempt with a retryable error", async () => {
      w.fake!.set({ fail5xx: 100 });
      const err = await driverError(w.driver().embed(["a"], { model: s.model, dimensions: s.dims, kind: "document" }));
      expect(err.retryable).toBe(true);
      expect(err.message).toContain("503");
      expect(w.fake!.requests).toHaveLength(4);
    });

    http("a rejected key fails at once, in the provider's words, without the key", async () => {
      const key = "sk-wrong-secret-key-0123456789";
      const err = await driverError(w.driver({}, key).embed(["a"], { model: s.model, dimensions: s.dims, kind: "document" }));
      expect(err.retryable).toBe(false);
      expect(err.message).toContain("401");
      expect(err.message).toContain("Incorrect API key provided");
      expect(err.message).not.toContain(key);
      expect(JSON.stringify(err.context)).not.toContain(key);
      expect(w.fake!.requests).toHaveLength(1);
    });

    // A 200 the driver cannot use is the provider's transient fault (issue 14): asked again, and
    // when it keeps coming, a retryable error saying what was wrong, so the task retries later.
    const BAD_ANSWERS = [
      ["malformed", "malformed body"],
      ["notJson", "not JSON"],
      ["wrongCount", "asked for 2 embeddings, the answer holds 1"],
      ["wrongDimensions", `has ${s.reducedDims - 1} dimensions, expected ${s.reducedDims}`],
      // A null among JSON numbers, NaN among base64 floats.
      ["nonNumeric", `holds ${s.skips.base64 === undefined ? "NaN" : "null"} at position 0, not a finite number`],
    ] as const;

    http.each(BAD_ANSWERS)("a %s answer is asked for again, and the retry's answer is used", async (sw) => {
      w.fake!.set({ [sw]: 2 });
      const d = w.driver();
      const out = await d.embed(["a", "b"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      close(out[1]!, expected("b", s.reducedDims));
      expect(w.fake!.requests).toHaveLength(3);
      expect(d.stats.retries).toBe(2);
    });

    http.each(BAD_ANSWERS)("%s answers only: a retryable DriverError saying what was wrong, after 3 attempts", async (sw, words) => {
      w.fake!.set({ [sw]: 100 });
      const err = await driverError(w.driver().embed(["a", "b"], { model: s.model, dimensions: s.reducedDims, kind: "document" }));
      expect(err.retryable).toBe(true);
      expect(err.message).toContain(words);
      expect(err.message).toContain("gave up after 3 attempts");
      expect(w.fake!.requests).toHaveLength(3); // fewer than a 5xx gets (FAST: 4): each was likely billed
    });
  });

  // Vectors as base64 float32 (OpenAI's SDKs ask so): ~a quarter of the bytes, and decoding them
  // costs a few ms where parsing JSON numbers held the event loop ~20 ms a 2,048-input answer.
  describe("base64 answers", () => {
    base64("asks for base64 and reads the provider's vectors from it", async () => {
      const out = await w.driver().embed(["alpha", "beta"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      expect(w.fake!.requests[0]!.body.encoding_format).toBe("base64");
      close(out[0]!, expected("alpha", s.reducedDims));
      close(out[1]!, expected("beta", s.reducedDims));
    });

    base64("a compatible server that ignores the field and answers numbers is read as well", async () => {
      w.fake!.set({ base64: "ignore" });
      const out = await w.driver().embed(["alpha"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      expect(w.fake!.requests.map((r) => [r.status, r.body.encoding_format])).toEqual([[200, "base64"]]); // asked for base64, answered numbers
      close(out[0]!, expected("alpha", s.reducedDims));
    });

    base64("a server that refuses base64 is asked for numbers at once, and from then on", async () => {
      w.fake!.set({ base64: "refuse" });
      const d = w.driver();
      const first = await d.embed(["alpha"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      close(first[0]!, expected("alpha", s.reducedDims));
      const second = await d.embed(["beta"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      close(second[0]!, expected("beta", s.reducedDims));
      expect(w.fake!.requests.map((r) => [r.status, r.body.encoding_format === "base64"])).toEqual([[400, true], [200, false], [200, false]]);
    });

    base64("once a base64 answer came back, a 400 is the request's own fault: not asked again in numbers", async () => {
      const d = w.driver({ maxInputsPerRequest: 2 });
      await d.embed(["alpha"], { model: s.model, dimensions: s.reducedDims, kind: "document" });
      w.fake!.set({ maxInputs: 1 });
      const err = await driverError(d.embed(["alpha", "beta"], { model: s.model, dimensions: s.reducedDims, kind: "document" }));
      expect(err.retryable).toBe(false);
      expect(err.message).toContain("400");
      expect(w.fake!.requests.map((r) => [r.status, r.body.encoding_format])).toEqual([[200, "base64"], [400, "base64"]]);
    });
  });

  describe("governor", () => {
    http("two callers with one key share one budget", async () => {
      // 600 requests/min with half a second of burst: ~5 at once, then ~10 per second.
      const limit = { requestsPerMinute: 600, tokensPerMinute: 10_000_000, burstSec: 0.5 };
      w.fake!.set({ rateLimit: limit });
      const tuning = { rateLimits: limit, burstSec: 0.5, maxInputsPerRequest: 1 };
      const a = w.driver(tuning);
      const b = w.driver(tuning);
      const started = performance.now();
      await Promise.all([a, b].map((d, i) => d.embed(texts(6, `caller${i}`), { model: s.model, dimensions: s.dims, kind: "document" })));
      const elapsed = performance.now() - started;
      expect(w.fake!.counters.rateLimited).toBe(0);
      expect(elapsed).toBeGreaterThan(500); // 12 requests cannot pass at 2× the rate
    });

    http("a 429 pauses every caller of the key", async () => {
      // OpenAI's retry-after-ms (honoured for every provider) keeps this test short.
      w.fake!.set({ fail429: 1, retryAfterSec: 1, retryAfterMs: 300, latencyMs: 20 });
      const a = w.driver();
      const b = w.driver();
      const pa = a.embed(["first"], { model: s.model, dimensions: s.dims, kind: "document" });
      // b starts once a has received its 429 (counted in the same tick the pause is set), not
      // after a fixed sleep: on a loaded machine b's request could otherwise overtake a's answer.
      while (a.stats.rateLimited === 0) await Bun.sleep(1);
      const pb = b.embed(["second"], { model: s.model, dimensions: s.dims, kind: "document" });
      await Promise.all([pa, pb]);
      const ok = w.fake!.requests.filter((r) => r.status === 200);
      const first429 = w.fake!.requests.find((r) => r.status === 429)!;
      expect(ok).toHaveLength(2);
      expect(ok.every((r) => r.atMs - first429.atMs >= 280 || r.atMs < first429.atMs)).toBe(true);
    });
  });
});

describe("local lexical model", () => {
  const d = () => lexicalVector;
  test("is deterministic and unit length", () => {
    const v = d()("The quick brown fox", 512);
    expect(Array.from(v)).toEqual(Array.from(lexicalVector("The quick brown fox", 512)));
    expect(v.reduce((n, x) => n + x * x, 0)).toBeCloseTo(1, 5);
  });
  test("puts texts sharing words closer than unrelated ones", () => {
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((n, x, i) => n + x * b[i]!, 0);
    const q = lexicalVector("embedding providers rate limits", 512);
    const near = lexicalVector("rate limits of embedding providers", 512);
    const far = lexicalVector("a recipe for lemon cake", 512);
    expect(dot(q, near)).toBeGreaterThan(dot(q, far) + 0.3);
  });
});

describe("the fake providers' vectors", () => {
  test("two texts whose 32-bit FNV hashes collide still get different vectors (the fault harness met such a pair)", () => {
    const a = fakeVector("text-embedding-3-small", "none", "crash row 35299 silent river", 32);
    const b = fakeVector("text-embedding-3-small", "none", "crash row 12193 silent lantern", 32);
    const cosine = a.reduce((sum, x, i) => sum + x * b[i]!, 0);
    expect(cosine).toBeLessThan(0.9);
  });
});
