import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";

let app: TestApp;
let org: TestOrg;
let prodId: string;
beforeAll(async () => {
  app = await createTestApp({ env: { VECSYNC_DENY_HOSTS: "10.9.0.0/16,blocked.example" } });
  org = await newOrganization(app);
  const envs = await json(await app.request("GET", "/v1/environments", { headers: org.owner.key }));
  prodId = envs.data.find((e: { name: string }) => e.name === "prod").id;
});
afterAll(() => app[Symbol.asyncDispose]());

let n = 0;
const uniqueName = () => `provider-${++n}`;
const create = (body: Record<string, unknown>, headers: Record<string, string> = org.owner.key) =>
  app.request("POST", "/v1/embedding-providers", { headers, body: { name: uniqueName(), ...body } });

const expectInvalid = async (res: Response, path: string) => {
  expect(res.status).toBe(400);
  const body = await json(res);
  expect(body.error.code).toBe("validation_error");
  expect(body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  return body;
};

describe("happy", () => {
  test.each([
    ["emb_a", "text-embedding-3-small"],
    ["emb_b", "emb_b-embedding-001"],
    ["emb_c", "emb_c-3.5-lite"],
  ])("201 for %s with default_model %s, in prod, without the key", async (provider, model) => {
    const name = uniqueName();
    const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name, provider, api_key: "sk-test-abcdef123456", default_model: model } });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{26}$/),
      org_id: org.id,
      environment_id: prodId,
      name,
      provider,
      default_model: model,
      base_url: null,
      status: "active",
      created_at: expect.any(String),
    });
  });

  test("default_model is optional and null when unset", async () => {
    const body = await json(await create({ provider: "emb_c", api_key: "pa-key-12345678" }));
    expect(body.default_model).toBeNull();
  });

  test("local needs no api_key", async () => {
    const res = await create({ provider: "local", default_model: "local-lexical-v1" });
    expect(res.status).toBe(201);
    expect((await json(res)).provider).toBe("local");
  });

  test("base_url is stored without trailing slashes and echoed", async () => {
    const res = await create({ provider: "emb_a", api_key: "sk-abcdefgh", base_url: "http://127.0.0.1:11434/v1/" });
    expect(res.status).toBe(201);
    expect((await json(res)).base_url).toBe("http://127.0.0.1:11434/v1");
  });

  test.each(["http://127.0.0.1:11434/v1", "http://[::1]:8080/v1", "http://192.168.1.20:8080/v1", "http://localhost:11434/v1"])("base_url %s is allowed: loopback and private hosts serve self-hosted models", async (baseUrl) => {
    expect((await create({ provider: "emb_a", api_key: "sk-abcdefgh", base_url: baseUrl })).status).toBe(201);
  });

  test("X-Environment-Id places the provider in that environment", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
    const res = await create({ provider: "local" }, { ...org.owner.key, "x-environment-id": env.id });
    expect(res.status).toBe(201);
    expect((await json(res)).environment_id).toBe(env.id);
  });

  test("the same name in two organizations is fine", async () => {
    const other = await newOrganization(app);
    const first = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "shared-name", provider: "local" } });
    const second = await app.request("POST", "/v1/embedding-providers", { headers: other.owner.key, body: { name: "shared-name", provider: "local" } });
    expect([first.status, second.status]).toEqual([201, 201]);
  });
});

describe("errors", () => {
  test("409 name_taken for a duplicate name in the organization, whatever the environment", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "dup-env" } }));
    expect((await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "dup", provider: "local" } })).status).toBe(201);
    const res = await app.request("POST", "/v1/embedding-providers", { headers: { ...org.owner.key, "x-environment-id": env.id }, body: { name: "dup", provider: "local" } });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("name_taken");
  });

  test.each([["", "empty"], ["x".repeat(101), "101 characters"], [42, "a number"]])("400 for the name %p (%s)", async (name) => {
    await expectInvalid(await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name, provider: "local" } }), "name");
  });

  test("a 100-character name is fine", async () => {
    expect((await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "y".repeat(100), provider: "local" } })).status).toBe(201);
  });

  test.each(["openai", "EMB_A", "", null])("400 for the provider %p", async (provider) => {
    await expectInvalid(await create({ provider, api_key: "sk-abcdefgh" }), "provider");
  });

  test("400 for a missing name or provider", async () => {
    await expectInvalid(await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { provider: "local" } }), "name");
    await expectInvalid(await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "p" } }), "provider");
  });

  test.each(["emb_a", "emb_b", "emb_c"])("400 when %s has no api_key", async (provider) => {
    const body = await expectInvalid(await create({ provider }), "api_key");
    expect(body.error.message).toContain(provider);
  });

  test.each([["empty", ""], ["too long", "k".repeat(4097)], ["not a string", 12345], ["whitespace", "sk key"], ["a newline", "sk-key\n"]])("400 for an api_key that is %s", async (_, apiKey) => {
    await expectInvalid(await create({ provider: "emb_a", api_key: apiKey }), "api_key");
  });

  test("400 when local is sent an api_key or a base_url", async () => {
    await expectInvalid(await create({ provider: "local", api_key: "sk-abcdefgh" }), "api_key");
    await expectInvalid(await create({ provider: "local", base_url: "http://127.0.0.1:9/v1" }), "base_url");
  });

  test.each([
    ["emb_a", "emb_c-3.5"],
    ["emb_b", "text-embedding-3-small"],
    ["emb_c", "voyage-3.5"],
    ["emb_a", "gpt-4"],
    ["local", "text-embedding-3-small"],
  ])("400 for %s with the model %s, naming the provider's models", async (provider, model) => {
    const body = await expectInvalid(await create({ provider, api_key: provider === "local" ? undefined : "sk-abcdefgh", default_model: model }), "default_model");
    expect(body.error.details[0].message).toContain("expected one of");
  });

  test.each([
    ["ftp://example.com/v1", "scheme"],
    ["not a url", "unparseable"],
    ["https://user:secret@example.com/v1", "credentials"],
    ["https://example.com/v1?x=1", "query string"],
    ["https://example.com/v1#frag", "fragment"],
    ["http://169.254.169.254/latest", "cloud metadata"],
    ["http://[fd00:ec2::254]/v1", "IPv6 metadata"],
    ["http://2852039166/v1", "metadata as a decimal IPv4"],
    ["http://0xa9fea9fe/v1", "metadata as a hex IPv4"],
    ["http://metadata/v1", "GCP's short metadata name"],
    ["http://metadata.google.internal/v1", "GCP's metadata name"],
    ["http://10.9.3.4/v1", "VECSYNC_DENY_HOSTS CIDR"],
    ["http://blocked.example/v1", "VECSYNC_DENY_HOSTS name"],
  ])("400 for the base_url %s (%s)", async (baseUrl) => {
    await expectInvalid(await create({ provider: "emb_a", api_key: "sk-abcdefgh", base_url: baseUrl }), "base_url");
  });

  test("400 for an unknown field", async () => {
    await expectInvalid(await create({ provider: "local", status: "active" }), "status");
  });

  test("404 for an unknown or foreign X-Environment-Id, and nothing is created", async () => {
    const other = await newOrganization(app);
    const foreign = (await json(await app.request("GET", "/v1/environments", { headers: other.owner.key }))).data[0].id;
    for (const envId of ["0000000000000000000000000a", foreign]) {
      const res = await app.request("POST", "/v1/embedding-providers", { headers: { ...org.owner.key, "x-environment-id": envId }, body: { name: "nowhere", provider: "local" } });
      expect(res.status).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
    }
    const all = await json(await app.request("GET", "/v1/embedding-providers?limit=100", { headers: org.owner.key }));
    expect(all.data.some((p: { name: string }) => p.name === "nowhere")).toBe(false);
  });
});

describe("authz", () => {
  test("403 insufficient_permission for a read_only key, 401 for a JWT or nothing", async () => {
    const ro = await readOnlyKey(app, org.owner);
    const res = await create({ provider: "local" }, ro);
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
    expect((await create({ provider: "local" }, org.owner.jwt)).status).toBe(401);
    expect((await create({ provider: "local" }, {})).status).toBe(401);
  });

  test("any role with a full key may create", async () => {
    const { addMember } = await import("../../helpers/organizations.ts");
    const member = await addMember(app, org, "member");
    expect((await create({ provider: "local" }, member.key)).status).toBe(201);
  });
});
