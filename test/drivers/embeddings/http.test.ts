// The upstream call's limits (http.ts, pinned.ts): what an answer may put into our messages, how
// long a provider may make us wait, and where a guarded request is dialled.
import { afterEach, describe, expect, test } from "bun:test";
import { createEmbeddingProvider, type UpstreamGuard } from "../../../src/drivers/embeddings/index.ts";
import { MAX_RETRY_AFTER_MS, obeyedRetryAfterMs, providerMessage, PROVIDER_MESSAGE_CHARS } from "../../../src/drivers/embeddings/http.ts";
import { dialFor } from "../../../src/drivers/embeddings/pinned.ts";
import { AppError, DriverError } from "../../../src/shared/errors.ts";
import { hostPolicy } from "../../../src/shared/host-guard.ts";
import { startScriptedUpstream } from "../../fakes/embeddings/scripted.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { FAST } from "./subjects.ts";
import { fakeDns } from "../../fakes/dns.ts";

const guard = (table: Record<string, string[]>, deny: string[] = []): UpstreamGuard => ({ policy: hostPolicy({ denyHosts: deny, allowHosts: [] }), resolve: fakeDns(table) });

describe("happy", () => {
  test("a JSON error keeps its own message, cut to the limit, the key removed before the cut", () => {
    expect(providerMessage(JSON.stringify({ error: { message: "Invalid model" } }))).toBe("Invalid model");
    expect(providerMessage(JSON.stringify({ detail: "Voyage says no" }))).toBe("Voyage says no");
    expect(providerMessage(JSON.stringify({ error: "plain string" }))).toBe("plain string");
    const long = providerMessage(JSON.stringify({ error: { message: "x".repeat(5_000) } }));
    expect(long).toBe(`${"x".repeat(PROVIDER_MESSAGE_CHARS)}…`);
    // A key straddling the cut would leave its first characters behind if cut first.
    const key = "sk-straddling-secret-key-0123456789";
    const straddling = providerMessage(JSON.stringify({ error: { message: `${"y".repeat(190)}${key} and more` } }), key);
    expect(straddling).not.toContain(key.slice(0, 10));
    expect(straddling).toStartWith(`${"y".repeat(190)}[redacted]`);
  });

  test("a page that is not JSON contributes only its size; JSON without a message, only its size", () => {
    const page = "<html><body>db password: hunter2, internal-token abc123</body></html>";
    expect(providerMessage(page)).toBe(`(non-JSON answer, ${page.length} bytes)`);
    expect(providerMessage(JSON.stringify({ secrets: ["hunter2"] }))).toBe("(JSON answer without an error message, 23 bytes)");
    expect(providerMessage("")).toBe("(empty answer)");
  });

  test("Retry-After is obeyed up to the cap; past it, our own backoff", () => {
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
    expect(obeyedRetryAfterMs(new Headers({ "retry-after": "60" }))).toBe(60_000);
    expect(obeyedRetryAfterMs(new Headers({ "retry-after": "61" }))).toBeNull();
    expect(obeyedRetryAfterMs(new Headers({ "retry-after": "100000" }))).toBeNull();
    expect(obeyedRetryAfterMs(new Headers({ "retry-after-ms": "600000" }))).toBeNull();
    expect(obeyedRetryAfterMs(new Headers({ "retry-after": new Date(10_000_000).toUTCString() }), 7_000)).toBeNull();
  });

  test("a guarded URL is dialled at the vetted address, naming the host in Host and for TLS", async () => {
    const dns = guard({ "api.vendor.test": ["2001:db8::5", "203.0.113.7"], "v6.vendor.test": ["2001:db8::9"] });
    expect(await dialFor("https://api.vendor.test/v1/embeddings", dns)).toEqual({ url: "https://203.0.113.7/v1/embeddings", headers: { host: "api.vendor.test" }, tls: { serverName: "api.vendor.test" } });
    expect(await dialFor("http://v6.vendor.test:8080/v1/embeddings", dns)).toEqual({ url: "http://[2001:db8::9]:8080/v1/embeddings", headers: { host: "v6.vendor.test:8080" } });
    expect(await dialFor("https://127.0.0.1:8443/v1", dns)).toEqual({ url: "https://127.0.0.1:8443/v1", headers: { host: "127.0.0.1:8443" } });
    expect(await dialFor("https://api.vendor.test/v1", undefined)).toEqual({ url: "https://api.vendor.test/v1", headers: {} });
  });

  test("a refused name is refused at dial time, whatever it was when saved", async () => {
    const dns = guard({ "rebound.test": ["10.0.0.1", "169.254.169.254"], "corp.test": ["10.1.2.3"] }, ["10.0.0.0/8"]);
    for (const url of ["http://rebound.test/v1", "http://corp.test/v1", "http://[::ffff:10.1.2.3]/v1", "http://metadata./v1"]) {
      const err = await dialFor(url, dns).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
    }
  });
});

describe("live", () => {
  let fake: FakeEmbeddings | null = null;
  afterEach(async () => {
    await fake?.stop();
    fake = null;
  });

  test("a guarded driver reaches a name through the address the resolver gave, with the name as Host", async () => {
    await using upstream = startScriptedUpstream(() => Response.json({ data: [{ index: 0, embedding: new Array(256).fill(0.5) }], usage: { total_tokens: 1 } }));
    const baseUrl = upstream.url.replace("127.0.0.1", "api.vendor.test");
    const driver = createEmbeddingProvider({ provider: "emb_a", apiKey: "sk-vendor-key-0001", baseUrl, tuning: FAST, guard: guard({ "api.vendor.test": ["127.0.0.1"] }) });
    const [vector] = await driver.embed(["x"], { model: "text-embedding-3-small", dimensions: 256, kind: "query" });
    expect(vector!.length).toBe(256);
    expect(upstream.requests).toEqual([{ method: "POST", path: "/v1/embeddings", host: `api.vendor.test:${upstream.port}` }]);
  });

  test("a name that resolves to a refused address: no request, a DriverError that will not be retried", async () => {
    fake = await startFakeEmbeddings("emb_a");
    const baseUrl = fake.url.replace("127.0.0.1", "rebound.test");
    const driver = createEmbeddingProvider({ provider: "emb_a", apiKey: fake.apiKey, baseUrl, tuning: FAST, guard: guard({ "rebound.test": ["169.254.169.254"] }) });
    const err = await driver.embed(["x"], { model: "text-embedding-3-small", dimensions: 256, kind: "query" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverError);
    expect((err as DriverError).retryable).toBe(false);
    expect((err as DriverError).message).toContain("base_url refused");
    expect((err as DriverError).message).toContain("link-local and cloud-metadata");
    expect(fake.requests).toHaveLength(0);
  });
});
