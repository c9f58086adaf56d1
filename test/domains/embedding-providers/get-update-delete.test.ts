import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { embeddingProviders } from "../../../src/domains/embedding-providers/tables.ts";
import { deleteOrganizationData } from "../../../src/domains/organizations/deletion.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type Bearer, type TestOrg } from "../../helpers/organizations.ts";
import { addDependent } from "../../helpers/dependents.ts";

// A stand-in user of providers: those in this set count as used.
const usedProviders = new Set<string>();

let app: TestApp;
let org: TestOrg;
let ro: Bearer;
beforeAll(async () => {
  app = await createTestApp();
  addDependent(app.services, "embeddingProvider", { resource: "test widgets", count: async (_, providerId) => (usedProviders.has(providerId) ? 1 : 0) });
  org = await newOrganization(app);
  ro = await readOnlyKey(app, org.owner);
});
afterAll(() => app[Symbol.asyncDispose]());

let n = 0;
async function newProvider(body: Record<string, unknown> = {}, headers: Record<string, string> = org.owner.key) {
  const res = await app.request("POST", "/v1/embedding-providers", { headers, body: { name: `gud-${++n}`, provider: "emb_a", api_key: "sk-original-key-0001", ...body } });
  expect(res.status).toBe(201);
  return json(res);
}
const path = (id: string, rest = "") => `/v1/embedding-providers/${id}${rest}`;
const put = (id: string, body: unknown, headers: Record<string, string> = org.owner.key) => app.request("PUT", path(id), { headers, body });

describe("happy", () => {
  test("GET answers the created object, for full and read_only keys", async () => {
    const created = await newProvider({ default_model: "text-embedding-3-large" });
    for (const headers of [org.owner.key, ro]) {
      const res = await app.request("GET", path(created.id), { headers });
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual(created);
    }
  });

  test("PUT changes name, default_model and base_url, answers the updated object", async () => {
    const created = await newProvider();
    const res = await put(created.id, { name: "renamed", default_model: "text-embedding-ada-002", base_url: "https://gateway.example.com/openai/v1/" });
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated).toEqual({ ...created, name: "renamed", default_model: "text-embedding-ada-002", base_url: "https://gateway.example.com/openai/v1" });
    expect(await json(await app.request("GET", path(created.id), { headers: org.owner.key }))).toEqual(updated);
  });

  test("PUT with null clears default_model and base_url; {} changes nothing", async () => {
    const created = await newProvider({ default_model: "text-embedding-3-small", base_url: "http://127.0.0.1:9/v1" });
    expect(await json(await put(created.id, {}))).toEqual(created);
    expect(await json(await put(created.id, { default_model: null, base_url: null }))).toEqual({ ...created, default_model: null, base_url: null });
  });

  test("PUT keeping its own name is not a conflict", async () => {
    const created = await newProvider();
    expect((await put(created.id, { name: created.name })).status).toBe(200);
  });

  test("PUT replaces the stored key (sealed anew)", async () => {
    const created = await newProvider();
    const [before] = await app.services.database.db.select().from(embeddingProviders).where(eq(embeddingProviders.id, created.id));
    expect((await put(created.id, { api_key: "sk-rotated-key-0002" })).status).toBe(200);
    const [after] = await app.services.database.db.select().from(embeddingProviders).where(eq(embeddingProviders.id, created.id));
    expect(after!.apiKeySealed).not.toBe(before!.apiKeySealed);
    expect(app.services.secrets.open(after!.apiKeySealed!, "embedding_provider.api_key")).toBe("sk-rotated-key-0002");
  });

  test("DELETE answers 204, then the provider is gone and its name free", async () => {
    const created = await newProvider();
    const res = await app.request("DELETE", path(created.id), { headers: org.owner.key });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await app.request("GET", path(created.id), { headers: org.owner.key })).status).toBe(404);
    expect((await app.request("DELETE", path(created.id), { headers: org.owner.key })).status).toBe(404);
    await newProvider({ name: created.name });
  });

  test.each([
    ["emb_a", ["text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002"]],
    ["emb_b", ["emb_b-embedding-001", "text-embedding-005", "text-embedding-004"]],
    ["emb_c", ["emb_c-3.5", "emb_c-3.5-lite", "emb_c-code-3", "emb_c-3-large", "emb_c-3-lite"]],
    ["local", ["local-lexical-v1", "local-semantic-v1"]],
  ])("/models of an %s provider lists exactly its models", async (provider, models) => {
    const created = await newProvider(provider === "local" ? { provider, api_key: undefined } : { provider });
    const res = await app.request("GET", path(created.id, "/models"), { headers: ro });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.models.map((m: { model: string }) => m.model)).toEqual(models);
    expect(body.models.every((m: { provider: string }) => m.provider === provider)).toBe(true);
  });

  test("/models rows carry the documented figures (docs/api.md#models)", async () => {
    const created = await newProvider({ provider: "emb_b" });
    expect((await json(await app.request("GET", path(created.id, "/models"), { headers: org.owner.key }))).models).toEqual([
      { model: "emb_b-embedding-001", dimensions: 3072, max_tokens: 2048, provider: "emb_b" },
      { model: "text-embedding-005", dimensions: 768, max_tokens: 2048, provider: "emb_b" },
      { model: "text-embedding-004", dimensions: 768, max_tokens: 2048, provider: "emb_b" },
    ]);
  });
});

describe("errors", () => {
  test("404 not_found for an unknown id on GET, PUT, DELETE and /models", async () => {
    const id = "0000000000000000000000000a";
    for (const [method, p, body] of [["GET", path(id)], ["PUT", path(id), { name: "x" }], ["DELETE", path(id)], ["GET", path(id, "/models")]] as const) {
      const res = await app.request(method, p, { headers: org.owner.key, body });
      expect([method, p, res.status, (await json(res)).error.code]).toEqual([method, p, 404, "not_found"]);
    }
  });

  test("PUT to another provider's name → 409 name_taken", async () => {
    const a = await newProvider();
    const b = await newProvider();
    const res = await put(b.id, { name: a.name });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("name_taken");
  });

  test.each([
    ["a model of another provider", { default_model: "emb_c-3.5" }, "default_model"],
    ["an empty name", { name: "" }, "name"],
    ["a 101-character name", { name: "n".repeat(101) }, "name"],
    ["an empty api_key", { api_key: "" }, "api_key"],
    ["an api_key with a space", { api_key: "sk two" }, "api_key"],
    ["a null api_key", { api_key: null }, "api_key"],
    ["a metadata base_url", { base_url: "http://169.254.169.254/v1" }, "base_url"],
    ["a provider change", { provider: "emb_c" }, "provider"],
  ])("PUT with %s → 400 validation_error", async (_, body, field) => {
    const created = await newProvider();
    const res = await put(created.id, body);
    expect(res.status).toBe(400);
    const err = (await json(res)).error;
    expect(err.code).toBe("validation_error");
    expect(err.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(await json(await app.request("GET", path(created.id), { headers: org.owner.key }))).toEqual(created);
  });

  test("PUT of an api_key or base_url on a local provider → 400", async () => {
    const created = await newProvider({ provider: "local", api_key: undefined });
    expect((await put(created.id, { api_key: "sk-abcdefgh" })).status).toBe(400);
    expect((await put(created.id, { base_url: "http://127.0.0.1:9/v1" })).status).toBe(400);
  });

  test("DELETE while something uses the provider → 409 in_use, and it stays", async () => {
    const created = await newProvider();
    usedProviders.add(created.id);
    const res = await app.request("DELETE", path(created.id), { headers: org.owner.key });
    expect(res.status).toBe(409);
    expect((await json(res)).error).toEqual({ code: "in_use", message: expect.stringContaining("test widgets"), details: { used_by: ["test widgets"] } });
    usedProviders.delete(created.id);
    expect((await app.request("DELETE", path(created.id), { headers: org.owner.key })).status).toBe(204);
  });

  test("an environment with a provider cannot be deleted until the provider is", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: `holds-${++n}` } }));
    const created = await newProvider({}, { ...org.owner.key, "x-environment-id": env.id });
    const refused = await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key });
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.details).toEqual({ attached: ["embedding providers"] });
    expect((await app.request("DELETE", path(created.id), { headers: org.owner.key })).status).toBe(204);
    expect((await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key })).status).toBe(204);
  });
});

describe("authz", () => {
  test("read_only key: PUT and DELETE → 403, nothing changes", async () => {
    const created = await newProvider();
    for (const res of [await put(created.id, { name: "ro-rename" }, ro), await app.request("DELETE", path(created.id), { headers: ro })]) {
      expect(res.status).toBe(403);
      expect((await json(res)).error.code).toBe("insufficient_permission");
    }
    expect(await json(await app.request("GET", path(created.id), { headers: org.owner.key }))).toEqual(created);
  });

  test("a JWT → 401 on every provider route", async () => {
    const created = await newProvider();
    for (const [method, p] of [["GET", path(created.id)], ["PUT", path(created.id)], ["DELETE", path(created.id)], ["GET", path(created.id, "/models")]] as const) {
      expect((await app.request(method, p, { headers: org.owner.jwt, body: method === "PUT" ? { name: "x" } : undefined })).status).toBe(401);
    }
  });
});

describe("happy: organization deletion", () => {
  test("the organization's providers are deleted with it, others' stay", async () => {
    const doomed = await newOrganization(app);
    const kept = await newProvider();
    const gone = await newProvider({}, doomed.owner.key);
    await deleteOrganizationData(app.services, doomed.id);
    const rows = await app.services.database.db.select().from(embeddingProviders);
    expect(rows.some((r) => r.id === gone.id)).toBe(false);
    expect(rows.some((r) => r.id === kept.id)).toBe(true);
  });
});
