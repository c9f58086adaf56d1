// An embedding provider's base_url was checked as a string: IPv4 CIDRs only, no DNS, the allow
// list beating the deny list. Mapped, NAT64 and link-local IPv6 spellings, `metadata.google.internal.`
// (trailing dot), Alibaba's 100.100.100.200, names resolving to a refused address and the IPv6
// spellings of deny-listed IPv4 ranges were all accepted, and never checked again when used.
// Now it goes through the connections' host guard (docs/api.md#host-guard): at create, at update,
// and at every request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { embedOrFail, providerForEmbedding } from "../../src/domains/embedding-providers/embedding.ts";
import { embeddingProviders } from "../../src/domains/embedding-providers/tables.ts";
import { AppError } from "../../src/shared/errors.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings/server.ts";
import { createTestApp, type TestApp } from "../harness.ts";
import { json, newOrganization, type TestOrg } from "../helpers/organizations.ts";

/** Refused by default, with or without a deny list (the spellings create.test.ts covers were refused before). */
const DEFAULT_REFUSED = [
  "http://[::ffff:169.254.169.254]/v1",
  "http://[::ffff:a9fe:a9fe]/v1",
  "http://[64:ff9b::a9fe:a9fe]/v1",
  "http://[2002:a9fe:a9fe::1]/v1",
  "http://[fe80::1]/v1",
  "http://100.100.100.200/v1",
  "http://metadata.google.internal./v1",
  "http://METADATA.Google.Internal./computeMetadata/v1",
  "http://metadata./v1",
];

/** Refused by VECSYNC_DENY_HOSTS below, in every spelling; the allow list does not lift a deny entry. */
const DENY_ENV = { VECSYNC_DENY_HOSTS: "10.0.0.0/8,blocked.example", VECSYNC_ALLOW_HOSTS: "10.1.0.0/16" };
const DENY_REFUSED = ["http://10.1.2.3/v1", "http://[::ffff:10.1.2.3]/v1", "http://[::ffff:a01:203]/v1", "http://[64:ff9b::10.1.2.3]/v1", "http://BLOCKED.example./v1"];

describe.each([
  ["without VECSYNC_DENY_HOSTS", {}, DEFAULT_REFUSED],
  ["with VECSYNC_DENY_HOSTS", DENY_ENV, [...DEFAULT_REFUSED, ...DENY_REFUSED]],
] as const)("%s", (_, env, refused) => {
  let app: TestApp;
  let org: TestOrg;
  let existing: { id: string; base_url: string };
  beforeAll(async () => {
    app = await createTestApp({ env });
    org = await newOrganization(app);
    const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "existing", provider: "emb_a", api_key: "sk-abcdefgh", base_url: "http://127.0.0.1:9/v1" } });
    existing = await json(res);
  });
  afterAll(() => app[Symbol.asyncDispose]());

  const expectRefused = async (res: Response) => {
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe("validation_error");
    expect(body.error.details.map((d: { path: string }) => d.path)).toEqual(["base_url"]);
  };

  let n = 0;
  test.each([...refused])("%s → 400 at create and at update", async (baseUrl) => {
    const created = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: `p-${++n}`, provider: "emb_a", api_key: "sk-abcdefgh", base_url: baseUrl } });
    await expectRefused(created);
    await expectRefused(await app.request("PUT", `/v1/embedding-providers/${existing.id}`, { headers: org.owner.key, body: { base_url: baseUrl } }));
    const stored = await json(await app.request("GET", `/v1/embedding-providers/${existing.id}`, { headers: org.owner.key }));
    expect(stored.base_url).toBe(existing.base_url);
  });

});

describe("names and rows stored before the guard", () => {
  let app: TestApp;
  let org: TestOrg;
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    fake = await startFakeEmbeddings("emb_a");
    app = await createTestApp({ env: { VECSYNC_DENY_HOSTS: "127.0.0.0/8,::1" } });
    org = await newOrganization(app);
  });
  afterAll(async () => {
    await app[Symbol.asyncDispose]();
    await fake.stop();
  });

  test("a name that resolves to a refused address when saved → 400 at create", async () => {
    // localhost resolves through /etc/hosts; the deny list refuses loopback in this service.
    const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "local-name", provider: "emb_a", api_key: "sk-abcdefgh", base_url: "http://localhost:9/v1" } });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.details).toEqual([{ path: "base_url", message: expect.stringContaining("deny list") }]);
  });

  test("a row saved before the guard is refused at request time, and nothing is sent", async () => {
    const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "legacy", provider: "emb_a", api_key: fake.apiKey } });
    const { id } = await json(res);
    await app.services.database.db.update(embeddingProviders).set({ baseUrl: fake.url.replace("127.0.0.1", "[::ffff:127.0.0.1]") }).where(eq(embeddingProviders.id, id));
    const driver = await providerForEmbedding(app.services, org.id, id, { tuning: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } } });
    const err = await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 256, kind: "document" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect([(err as AppError).code, (err as AppError).details]).toEqual(["provider_error", { provider: "emb_a", retryable: false }]);
    expect((err as AppError).message).toContain("deny list");
    expect(fake.requests).toHaveLength(0);
  });
});
