// providerForEmbedding and embedOrFail, driven through the fake providers on real ports.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { embedOrFail, providerForEmbedding } from "../../../src/domains/embedding-providers/embedding.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { startScriptedUpstream } from "../../fakes/embeddings/scripted.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, json, type TestOrg } from "../../helpers/organizations.ts";
import { fakeDns } from "../../fakes/dns.ts";

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

/** embedOrFail's AppError for a failed query embedding through provider `id`. */
async function queryFailure(id: string, opts: Parameters<typeof providerForEmbedding>[3] = { tuning: FAST }): Promise<AppError> {
  const driver = await providerForEmbedding(app.services, org.id, id, opts);
  const err = await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 1536, kind: "query" }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  expect([(err as AppError).code, (err as AppError).status]).toEqual(["provider_error", 502]);
  return err as AppError;
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

  test("a redirect is not followed: its target gets no request, and the call fails for good", async () => {
    const target = fakes.emb_a;
    const before = target.requests.length;
    await using bouncer = startScriptedUpstream(() => new Response(null, { status: 307, headers: { location: `${target.url}/embeddings` } }));
    const id = await provider({ provider: "emb_a", api_key: target.apiKey, base_url: bouncer.url });
    const err = await queryFailure(id);
    expect(err.message).toContain("307");
    expect(err.details).toEqual({ provider: "emb_a", retryable: false });
    expect(bouncer.requests).toHaveLength(1);
    expect(target.requests.length).toBe(before);
  });

  test("a name that resolves to a metadata address at request time is refused, and nothing is sent", async () => {
    const fake = fakes.emb_a;
    const before = fake.requests.length;
    // The name does not resolve when the provider is saved (no refusal then); at request time it rebinds.
    const id = await provider({ provider: "emb_a", api_key: fake.apiKey, base_url: fake.url.replace("127.0.0.1", "rebind.vecsync.test") });
    for (const answers of [["169.254.169.254"], ["127.0.0.1", "169.254.169.254"], ["::ffff:169.254.169.254"]]) {
      const err = await queryFailure(id, { tuning: FAST, resolver: fakeDns({ "rebind.vecsync.test": answers }) });
      expect(err.message).toContain("base_url refused");
      expect(err.message).toContain("link-local and cloud-metadata");
      expect(err.details).toEqual({ provider: "emb_a", retryable: false });
    }
    expect(fake.requests.length).toBe(before);
    // The same name resolving to an allowed address is dialled there, the name kept as Host.
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST, resolver: fakeDns({ "rebind.vecsync.test": ["127.0.0.1"] }) });
    await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 256, kind: "query" });
    expect(fake.requests.at(-1)!.status).toBe(200);
  });

  test("an error page that is not JSON gives only its status and size, none of its text", async () => {
    const page = `<html><h1>Internal admin</h1><pre>SECRET_TOKEN=tok-internal-7f3a9c; db=postgres://admin:pw@10.0.0.5</pre>${" ".repeat(1000)}</html>`;
    await using upstream = startScriptedUpstream(() => new Response(page, { status: 500, headers: { "content-type": "text/html" } }));
    const id = await provider({ provider: "emb_a", api_key: "sk-scripted-0000001", base_url: upstream.url });
    const err = await queryFailure(id);
    expect(err.message).toContain(`500: (non-JSON answer, ${page.length} bytes)`);
    for (const secret of ["SECRET_TOKEN", "tok-internal", "admin", "10.0.0.5"]) expect(err.message).not.toContain(secret);
  });

  test("a provider's JSON message of 5,000 characters is cut to 200", async () => {
    await using upstream = startScriptedUpstream(() => Response.json({ error: { message: "m".repeat(5_000) } }, { status: 400 }));
    const id = await provider({ provider: "emb_a", api_key: "sk-scripted-0000002", base_url: upstream.url });
    const err = await queryFailure(id);
    expect(err.message).toContain(`400: ${"m".repeat(200)}…`);
    expect(err.message).not.toContain("m".repeat(201));
    expect(err.message.length).toBeLessThan(400);
  });

  test("a Retry-After of 100,000 s is not obeyed: our own backoff instead (429 and 503)", async () => {
    const fake = fakes.emb_a;
    const id = await provider({ provider: "emb_a", api_key: fake.apiKey, base_url: fake.url });
    fake.set({ fail429: 1, retryAfterSec: 100_000 });
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: FAST });
    const started = performance.now();
    await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 256, kind: "query" });
    fake.set({ retryAfterSec: 1 });
    // A 503 asking for the same, then a refusal: the second attempt comes at our pace.
    await using upstream = startScriptedUpstream((n) =>
      n === 0 ? Response.json({ error: { message: "busy" } }, { status: 503, headers: { "retry-after": "100000" } }) : Response.json({ error: { message: "no" } }, { status: 400 }),
    );
    const scripted = await provider({ provider: "emb_a", api_key: "sk-scripted-0000003", base_url: upstream.url });
    expect((await queryFailure(scripted)).message).toContain("400: no");
    expect(upstream.requests).toHaveLength(3); // 503, 400, and the 400 once more asking for numbers (hosted.ts)
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 10_000);

  test("an unknown or foreign provider id → 404", async () => {
    const other = await newOrganization(app);
    const foreign = (await json(await app.request("POST", "/v1/embedding-providers", { headers: other.owner.key, body: { name: "theirs", provider: "local" } }))).id;
    for (const id of [foreign, "0000000000000000000000000a"]) {
      const err = (await providerForEmbedding(app.services, org.id, id).catch((e: unknown) => e)) as AppError;
      expect(err.code).toBe("not_found");
    }
  });
});
