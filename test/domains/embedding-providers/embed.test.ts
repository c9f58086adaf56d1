// providerForEmbedding and embedOrFail, driven through the fake providers on real ports.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { embedOrFail, providerForEmbedding } from "../../../src/domains/embedding-providers/embedding.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, json, type TestOrg } from "../../helpers/organizations.ts";

const FAST = { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }, timeoutMs: 5_000 };

let fakes: Record<"emb_a" | "emb_b" | "emb_c", FakeEmbeddings>;
let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  fakes = { emb_a: await startFakeEmbeddings("emb_a"), emb_b: await startFakeEmbeddings("emb_b"), emb_c: await startFakeEmbeddings("emb_c") };
  // emb_c's default base comes from the setting; the others are given a base_url per provider.
  app = await createTestApp({ env: { VECSYNC_EMB_C_URL: fakes.emb_c.url } });
  org = await newOrganization(app);
});
afterAll(async () => {
  await app[Symbol.asyncDispose]();
  for (const f of Object.values(fakes)) await f.stop();
});

let n = 0;
async function provider(body: Record<string, unknown>): Promise<string> {
  const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: `embed-${++n}`, ...body } });
  expect(res.status).toBe(201);
  return (await json(res)).id;
}

describe("happy", () => {
  test.each([
    ["emb_a", "text-embedding-3-small", 256, "text-embedding-3-small"],
    ["emb_b", "text-embedding-005", 768, "text-embedding-005"],
  ] as const)("%s through its base_url: one vector per text, the stored key sent", async (kind, model, dimensions, upstream) => {
    const fake = fakes[kind];
    const id = await provider({ provider: kind, api_key: fake.apiKey, base_url: fake.url });
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    const vectors = await embedOrFail(driver, ["first text", "second text"], { model, dimensions, kind: "document" });
    expect(vectors.map((v) => v.length)).toEqual([dimensions, dimensions]);
    expect(vectors[0]).not.toEqual(vectors[1]);
    const last = fake.requests.at(-1)!;
    expect([last.status, last.key, last.decoded?.model]).toEqual([200, fake.apiKey, upstream]);
  });

  test("without a base_url the VECSYNC_EMB_C_URL setting is the base", async () => {
    const id = await provider({ provider: "emb_c", api_key: fakes.emb_c.apiKey });
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    const [v] = await embedOrFail(driver, ["a query"], { model: "emb_c-3.5-lite", dimensions: 512, kind: "query" });
    expect(v!.length).toBe(512);
    expect(fakes.emb_c.requests.at(-1)!.decoded?.model).toBe("voyage-3.5-lite");
  });

  test("a new api_key set with PUT is the one sent next time", async () => {
    const fake = fakes.emb_a;
    const id = await provider({ provider: "emb_a", api_key: "sk-wrong-0000000000", base_url: fake.url });
    expect((await app.request("PUT", `/v1/embedding-providers/${id}`, { headers: org.owner.key, body: { api_key: fake.apiKey } })).status).toBe(200);
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 1536, kind: "document" });
    expect(fake.requests.at(-1)!.key).toBe(fake.apiKey);
  });

  test("local embeds in process without a key", async () => {
    const id = await provider({ provider: "local" });
    const driver = await providerForEmbedding(app.services, org.id, id);
    const vectors = await embedOrFail(driver, ["hello world", "hello world"], { model: "local-lexical-v1", dimensions: 512, kind: "document" });
    expect(vectors[0]!.length).toBe(512);
    expect(vectors[0]).toEqual(vectors[1]!);
  });
});

describe("errors", () => {
  test("a key the provider refuses → 502 provider_error with its words, the key redacted", async () => {
    const fake = fakes.emb_a;
    const wrongKey = "sk-refused-key-9876543210";
    const id = await provider({ provider: "emb_a", api_key: wrongKey, base_url: fake.url });
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    const err = await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 1536, kind: "query" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    const appErr = err as AppError;
    expect([appErr.code, appErr.status]).toEqual(["provider_error", 502]);
    // The fake echoes the whole key it was sent, as some providers do.
    expect(fake.requests.at(-1)!.key).toBe(wrongKey);
    expect(appErr.message).toContain("Incorrect API key provided");
    expect(appErr.message).not.toContain(wrongKey);
    expect(JSON.stringify(appErr.details)).not.toContain(wrongKey);
  });

  test("an upstream that keeps failing → 502 provider_error saying so", async () => {
    const fake = fakes.emb_b;
    const id = await provider({ provider: "emb_b", api_key: fake.apiKey, base_url: fake.url });
    fake.set({ fail5xx: 5 });
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    const err = (await embedOrFail(driver, ["x"], { model: "text-embedding-004", dimensions: 768, kind: "query" }).catch((e: unknown) => e)) as AppError;
    fake.set({ fail5xx: 0 });
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("overloaded");
  });

  test("an unknown or foreign provider id → 404", async () => {
    const other = await newOrganization(app);
    const foreign = (await json(await app.request("POST", "/v1/embedding-providers", { headers: other.owner.key, body: { name: "theirs", provider: "local" } }))).id;
    for (const id of [foreign, "0000000000000000000000000a"]) {
      const err = (await providerForEmbedding(app.services, org.id, id).catch((e: unknown) => e)) as AppError;
      expect(err.code).toBe("not_found");
    }
  });
});
