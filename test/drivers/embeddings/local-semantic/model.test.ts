// local-semantic-v1 through the local provider, the real model in its worker: what makes it worth
// its cost (meaning over shared words), and what the service relies on (unit vectors, counting,
// a free event loop). The driver contract (contract.test.ts) runs it too.
import { describe, expect, test } from "bun:test";
import { createEmbeddingProvider, type EmbeddingObserver } from "../../../../src/drivers/embeddings/index.ts";

const MODEL = "local-semantic-v1";
const dot = (a: Float32Array, b: Float32Array) => a.reduce((n, x, i) => n + x * b[i]!, 0);

function observed() {
  const seen = { requests: [] as Parameters<EmbeddingObserver["request"]>[0][], tokens: 0 };
  const observer: EmbeddingObserver = { request: (e) => seen.requests.push(e), tokens: (e) => (seen.tokens += e.tokens) };
  return { seen, driver: createEmbeddingProvider({ provider: "local", observer }) };
}

const embed = (texts: string[], model = MODEL) => createEmbeddingProvider({ provider: "local" }).embed(texts, { model, dimensions: 512, kind: "document" });

describe("happy", () => {
  test("unit vectors of 512, the same for the same text", async () => {
    const [a, b] = await embed(["The quick brown fox", "The quick brown fox"]);
    expect(a!.length).toBe(512);
    expect(dot(a!, a!)).toBeCloseTo(1, 5);
    expect(Array.from(a!)).toEqual(Array.from(b!));
  });

  // Each: a query, its paraphrase (other words, same meaning) and a distractor (the query's words,
  // another meaning). The model is no oracle on such pairs (it wins ~13 of 20 hand-made ones);
  // these three it wins by a wide margin, and the lexical model loses all three.
  test.each([
    ["How old are you?", "What is your age?", "How are you, old friend?"],
    ["the movie was boring", "the film was dull and tedious", "the boring machine made a movie tunnel"],
    ["the bank of the river flooded", "water overflowed the riverside", "the bank raised interest on river cruises"],
  ])("%j: the paraphrase scores above the same-words distractor", async (query, paraphrase, distractor) => {
    const [q, p, d] = await embed([query, paraphrase, distractor]);
    expect(dot(q!, p!)).toBeGreaterThan(dot(q!, d!) + 0.1);
    const [lq, lp, ld] = await embed([query, paraphrase, distractor], "local-lexical-v1");
    expect(dot(lq!, lp!)).toBeLessThan(dot(lq!, ld!));
  });

  test("a paraphrase finds its product among others", async () => {
    const products = ["Compact camping tent: a two-person tent for wet and windy weather", "Espresso machine with a steam wand", "Wireless noise cancelling headphones", "Cast iron skillet for searing steaks"];
    const [query, ...docs] = await embed(["portable shelter for a night in the woods", ...products]);
    const scores = docs.map((d) => dot(query!, d));
    expect(scores.indexOf(Math.max(...scores))).toBe(0);
  });

  test("one call is one request to the metrics, with the model's own token count", async () => {
    const { seen, driver } = observed();
    await driver.embed(["Hello world.", "Hello world."], { model: MODEL, dimensions: 512, kind: "query" });
    expect(seen.requests).toEqual([{ provider: "local", model: MODEL, ok: true, status: null }]);
    expect(seen.tokens).toBe(8); // ▁H|ello|▁world|. twice (tokenizer.test.ts)
    expect(driver.stats).toMatchObject({ requests: 1, inputs: 2, tokens: 8, truncated: 0, failures: 0 });
  });

  test("a text past 256 tokens is cut there and counted as cut", async () => {
    const { seen, driver } = observed();
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" "); // 1,100 tokens
    await driver.embed([long, "Hello world."], { model: MODEL, dimensions: 512, kind: "document" });
    expect(seen.tokens).toBe(256 + 4);
    expect(driver.stats.truncated).toBe(1);
  });

  test("the event loop keeps turning while a batch is embedded", async () => {
    let turns = 0;
    let running = true;
    const spin = async () => {
      while (running) {
        await new Promise((r) => setImmediate(r));
        turns++;
      }
    };
    const spinning = spin();
    await embed(Array.from({ length: 64 }, (_, i) => `Product ${i}: a compact espresso machine with stainless steel.`));
    running = false;
    await spinning;
    expect(turns).toBeGreaterThan(50); // thousands in practice; the model runs in its worker
  });
});
