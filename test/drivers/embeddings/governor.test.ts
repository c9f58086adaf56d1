// The rate governor on its own, and the pieces of the shared machinery with rules worth pinning:
// batching, token estimates, Retry-After parsing, the catalog.
import { describe, expect, test } from "bun:test";
import { planBatches } from "../../../src/drivers/embeddings/batching.ts";
import { findModel, modelsOf, validateModelChoice } from "../../../src/drivers/embeddings/catalog.ts";
import { governorCount, governorFor, RateGovernor } from "../../../src/drivers/embeddings/governor.ts";
import { redact, retryAfterMs } from "../../../src/drivers/embeddings/http.ts";
import { createEmbeddingProvider } from "../../../src/drivers/embeddings/index.ts";
import { estimateTokens, truncateToTokens, utf8Length } from "../../../src/drivers/embeddings/tokens.ts";
import { startFakeEmbeddings } from "../../fakes/embeddings/server.ts";

describe("happy", () => {
  test("the governor holds requests to the rate after the burst", async () => {
    // 6000/min = 100/s (97/s used); a 0.1 s burst lets ~10 through at once.
    const g = new RateGovernor({ requestsPerMinute: 6000, tokensPerMinute: 1e9 }, { burstSec: 0.1 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 40 }, () => g.acquire(1, "document")));
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(250); // (40 − ~10) / 97 per second ≈ 0.31 s
    expect(elapsed).toBeLessThan(1000);
  });

  test("the governor serves waiting queries before waiting documents", async () => {
    const g = new RateGovernor({ requestsPerMinute: 6000, tokensPerMinute: 1e9 }, { burstSec: 0.01 });
    const order: string[] = [];
    await g.acquire(1, "document"); // empties the one-request bucket
    const docs = [1, 2, 3].map((i) => g.acquire(1, "document").then(() => order.push(`d${i}`)));
    const query = g.acquire(1, "query").then(() => order.push("q"));
    await Promise.all([...docs, query]);
    expect(order[0]).toBe("q");
  });

  test("but documents are not starved: while both wait, one slot in four goes to a document", async () => {
    // 60,000/min = 1 a ms; a bucket of one request: every grant waits for the next slot.
    const g = new RateGovernor({ requestsPerMinute: 60_000, tokensPerMinute: 1e12 }, { burstSec: 0.001, utilization: 1 });
    await g.acquire(1, "document"); // empties the bucket
    const order: string[] = [];
    const grants = [
      ...Array.from({ length: 3 }, (_, i) => g.acquire(1, "document").then(() => order.push(`d${i}`))),
      ...Array.from({ length: 12 }, (_, i) => g.acquire(1, "query").then(() => order.push(`q${i}`))),
    ];
    await Promise.all(grants);
    // Queries first, and after every three of them a document: the stream's rows keep moving.
    expect(order.slice(0, 8)).toEqual(["q0", "q1", "q2", "d0", "q3", "q4", "q5", "d1"]);
  });

  test("the governor gives back tokens the provider did not count", async () => {
    const g = new RateGovernor({ requestsPerMinute: 1e6, tokensPerMinute: 6000 }, { burstSec: 1, utilization: 1 }); // 100 tokens/s, 100 at once
    await g.acquire(100, "document");
    g.settle(100, 20); // the provider counted 20
    const started = performance.now();
    await g.acquire(80, "document");
    expect(performance.now() - started).toBeLessThan(50);
  });

  test("emb_a adopts the limits the provider states in its headers", async () => {
    await using fake = await startFakeEmbeddings("emb_a", { switches: { rateLimit: { requestsPerMinute: 1234, tokensPerMinute: 567_890, burstSec: 6 }, stateLimits: true } });
    const d = createEmbeddingProvider({ provider: "emb_a", apiKey: fake.apiKey, baseUrl: fake.url });
    await d.embed(["a"], { model: "text-embedding-3-small", dimensions: 1536, kind: "document" });
    const { governorFor } = await import("../../../src/drivers/embeddings/governor.ts");
    const g = governorFor("emb_a", fake.url, fake.apiKey, { requestsPerMinute: 1, tokensPerMinute: 1 });
    expect(g.currentLimits).toEqual({ requestsPerMinute: 1234, tokensPerMinute: 567_890 });
  });

  test("the process keeps at most 1,000 governors, forgetting the least recently used idle ones", async () => {
    const limits = { requestsPerMinute: 60, tokensPerMinute: 1e9 };
    const busy = governorFor("emb_a", "http://busy.test", "key-busy", limits, { burstSec: 1 });
    await busy.acquire(1, "document"); // the bucket holds one request: the next waits a second
    const waiting = busy.acquire(1, "document");
    for (let i = 0; i < 1_100; i++) governorFor("emb_a", "http://many.test", `key-${i}`, limits);
    expect(governorCount()).toBeLessThanOrEqual(1_001);
    expect(governorFor("emb_a", "http://busy.test", "key-busy", limits)).toBe(busy); // not forgotten while waited on
    expect(governorFor("emb_a", "http://many.test", "key-1099", limits)).toBe(governorFor("emb_a", "http://many.test", "key-1099", limits));
    await waiting;
  });

  test("batches respect both ceilings and keep order", () => {
    const batches = planBatches([5, 5, 5, 50, 1, 1, 1, 1], 3, 12);
    expect(batches.map((b) => [b.start, b.end])).toEqual([[0, 2], [2, 3], [3, 4], [4, 7], [7, 8]]);
    expect(batches.every((b) => b.end - b.start <= 3)).toBe(true);
  });

  test("token estimates over-count and truncation stays on a code point", () => {
    expect(estimateTokens("hello world")).toBe(4);
    expect(utf8Length("é😀")).toBe(6);
    const cut = truncateToTokens("😀".repeat(100), 10); // 30 bytes → 7 emoji of 4 bytes
    expect(cut).toBe("😀".repeat(7));
    expect(truncateToTokens("short", 10)).toBe("short");
  });

  test("Retry-After in seconds, as a date, and OpenAI's retry-after-ms", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": new Date(10_000).toUTCString() }), 7_000)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "2", "retry-after-ms": "150" }))).toBe(150);
    expect(retryAfterMs(new Headers())).toBeNull();
    expect(redact("bad key sk-123456 here", "sk-123456")).toBe("bad key [redacted] here");
  });

  test("the catalog lists the documented model rows (docs/api.md#models) and the upstream ids", () => {
    expect(modelsOf("emb_c").map((m) => m.model)).toEqual(["emb_c-3.5", "emb_c-3.5-lite", "emb_c-code-3", "emb_c-3-large", "emb_c-3-lite"]);
    expect(modelsOf("emb_b")[0]).toEqual({ model: "emb_b-embedding-001", dimensions: 3072, max_tokens: 2048, provider: "emb_b" });
    expect(findModel("emb_b", "emb_b-embedding-001")?.upstreamId).toBe("gemini-embedding-001");
    expect(findModel("emb_c", "emb_c-code-3")?.upstreamId).toBe("voyage-code-3");
  });
});

describe("errors", () => {
  test.each([
    ["emb_a", "text-embedding-ada-002", 512, "dimensions"],
    ["emb_a", "text-embedding-3-small", 2000, "dimensions"],
    ["emb_c", "emb_c-3-lite", 256, "dimensions"],
    ["emb_c", "emb_c-3.5", 768, "dimensions"],
    ["emb_b", "gecko", 768, "model"],
    ["emb_x", "x", 1, "provider"],
  ])("validateModelChoice(%s, %s, %d) names %s", (provider, model, dims, path) => {
    expect(validateModelChoice(provider, model, dims).map((p) => p.path)).toEqual([path]);
  });

  test("valid choices have no problems", () => {
    expect(validateModelChoice("emb_a", "text-embedding-3-large", 1024)).toEqual([]);
    expect(validateModelChoice("emb_b", "emb_b-embedding-001", 768)).toEqual([]);
    expect(validateModelChoice("emb_c", "emb_c-3.5-lite", 256)).toEqual([]);
    expect(validateModelChoice("emb_a", "text-embedding-ada-002")).toEqual([]);
  });
});
