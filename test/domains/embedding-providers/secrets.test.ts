// The api_key is write-only (docs/api.md#embedding-providers): it appears in no answer, no log line, no error
// message, and not in plain text anywhere in the data directory. The app here is built like the
// harness's, but with its log captured at debug level.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config.ts";
import { openDatabase, type Database } from "../../../src/db/client.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { embeddingProviders } from "../../../src/domains/embedding-providers/tables.ts";
import { embedOrFail, providerForEmbedding } from "../../../src/domains/embedding-providers/embedding.ts";
import { createHttpApp } from "../../../src/server.ts";
import { openVectorStore, type Services } from "../../../src/services.ts";
import { buildServices } from "../../../src/wiring.ts";
import { createLogger } from "../../../src/shared/log.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { tempDir, type TempDir, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";

const logLines: string[] = [];
let dir: TempDir;
let database: Database;
let app: TestApp;
let fake: FakeEmbeddings;
let org: TestOrg;
/** Every body the service answered in this file. */
const answers: string[] = [];

beforeAll(async () => {
  dir = tempDir();
  fake = await startFakeEmbeddings("emb_a");
  const config = resolveConfig({ "data-dir": dir.path }, { VECSYNC_LOG_LEVEL: "debug" });
  database = await openDatabase(config.databaseUrl);
  await migrate(database.client);
  const logger = createLogger(config.logLevel, { write: (line: string) => void logLines.push(line) });
  const services: Services = buildServices(config, database, await openVectorStore(config, database, logger), logger);
  const http = createHttpApp(services);
  app = {
    services,
    config,
    async request(method, path, { body, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) } };
      if (body !== undefined) init.body = JSON.stringify(body);
      const res = await http.handle(new Request(`http://vecsync.test${path}`, init));
      const text = await res.clone().text();
      answers.push(text);
      return res;
    },
    async [Symbol.asyncDispose]() {
      await services.scheduler.stop();
    },
  };
  org = await newOrganization(app);
});
afterAll(async () => {
  await app[Symbol.asyncDispose]();
  await app.services.vectors.close();
  database.close();
  await fake.stop();
  dir[Symbol.dispose]();
});

const SECRETS: string[] = [];
/** A fresh key, remembered so the final sweep can look for it everywhere. */
const secret = (stem: string) => {
  const key = `sk-${stem}-${crypto.randomUUID().replaceAll("-", "")}`;
  SECRETS.push(key);
  return key;
};
const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = org.owner.key) => app.request(method, path, { headers, body });
const rpc = (name: string, input: unknown, headers: Record<string, string> = org.owner.key) => app.request("POST", `/trpc/${name}`, { headers, body: input });
const rpcQuery = (name: string, input: unknown) => app.request("GET", `/trpc/${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: org.owner.key });

describe("happy", () => {
  test("create, get, list, update and models never answer the key (REST and tRPC)", async () => {
    const created = await json(await rest("POST", "/v1/embedding-providers", { name: "s-rest", provider: "emb_a", api_key: secret("create") }));
    expect(Object.keys(created).sort()).toEqual(["base_url", "created_at", "default_model", "environment_id", "id", "name", "org_id", "provider", "status"]);
    await rest("GET", `/v1/embedding-providers/${created.id}`);
    await rest("GET", "/v1/embedding-providers?limit=100");
    await rest("GET", `/v1/embedding-providers/${created.id}/models`);
    expect((await rest("PUT", `/v1/embedding-providers/${created.id}`, { api_key: secret("update") })).status).toBe(200);
    const viaRpc = await rpc("embeddingProviders.create", { name: "s-rpc", provider: "emb_c", api_key: secret("rpc-create") });
    expect(viaRpc.status).toBe(200);
    const rpcId = (await json(viaRpc)).result.data.id;
    expect((await rpc("embeddingProviders.update", { provider_id: rpcId, api_key: secret("rpc-update"), name: "s-rpc-2" })).status).toBe(200);
    expect((await rpcQuery("embeddingProviders.get", { provider_id: rpcId })).status).toBe(200);
    expect((await rpcQuery("embeddingProviders.list", {})).status).toBe(200);
    expect((await rpcQuery("embeddingProviders.models", { provider_id: rpcId })).status).toBe(200);
  });

  test("the stored column holds a sealed value that opens to the key", async () => {
    const key = secret("stored");
    const created = await json(await rest("POST", "/v1/embedding-providers", { name: "s-stored", provider: "emb_b", api_key: key }));
    const rows = await app.services.database.db.select().from(embeddingProviders);
    const row = rows.find((r) => r.id === created.id)!;
    expect(row.apiKeySealed).toStartWith("v1.");
    expect(row.apiKeySealed).not.toContain(key);
    expect(app.services.secrets.open(row.apiKeySealed!, "embedding_provider.api_key")).toBe(key);
  });
});

describe("errors", () => {
  test("refused requests do not echo the key (validation, conflicts, 404, 403)", async () => {
    const ro = await readOnlyKey(app, org.owner);
    const cases: [string, unknown, Record<string, string>?][] = [
      ["/v1/embedding-providers", { name: "s-bad-1", provider: "emb_a", api_key: `${secret("space")} tail` }],
      ["/v1/embedding-providers", { name: "s-bad-2", provider: "emb_a", api_key: `${secret("newline")}\n` }],
      ["/v1/embedding-providers", { name: "s-bad-3", provider: "local", api_key: secret("local") }],
      ["/v1/embedding-providers", { name: "s-bad-4", provider: "emb_a", api_key: secret("long").repeat(200) }],
      ["/v1/embedding-providers", { name: "s-bad-5", provider: "emb_a", api_key: secret("model"), default_model: "nope" }],
      ["/v1/embedding-providers", { name: "s-rest", provider: "emb_a", api_key: secret("taken") }],
      ["/v1/embedding-providers", { name: "s-bad-6", provider: "emb_a", api_key: secret("env") }, { ...org.owner.key, "x-environment-id": "0000000000000000000000000a" }],
      ["/v1/embedding-providers", { name: "s-bad-7", provider: "emb_a", api_key: secret("ro") }, ro],
      ["/v1/embedding-providers", { name: "s-bad-8", provider: "emb_a", api_key: secret("extra"), extra: secret("extra-field") }],
    ];
    for (const [path, body, headers] of cases) {
      const res = await rest("POST", path, body, headers ?? org.owner.key);
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    expect((await rpc("embeddingProviders.create", { name: "s-bad-rpc", provider: "emb_a", api_key: `${secret("rpc-space")} x` })).status).toBe(400);
    expect((await rest("PUT", "/v1/embedding-providers/0000000000000000000000000a", { api_key: secret("put-404") })).status).toBe(404);
  });

  test("a provider that refuses the key: the 502 message and the log carry its words, not the key", async () => {
    const key = secret("refused");
    const created = await json(await rest("POST", "/v1/embedding-providers", { name: "s-refused", provider: "emb_a", api_key: key, base_url: fake.url }));
    const driver = await providerForEmbedding(app.services, org.id, created.id, { tuning: { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } } });
    const err = (await embedOrFail(driver, ["x"], { model: "text-embedding-3-small", dimensions: 1536, kind: "query" }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(fake.requests.at(-1)!.key).toBe(key); // the fake saw (and echoed) it
    app.services.logger.error({ err }, "query embedding failed");
    answers.push(err.message);
  });
});

describe("authz", () => {
  test("sweep: no key in any answer, any log line, or any file of the data directory", async () => {
    expect(SECRETS.length).toBeGreaterThan(10);
    expect(logLines.length).toBeGreaterThan(10);
    expect(logLines.some((l) => l.includes("embedding provider created"))).toBe(true);
    const files = readdirSync(dir.path, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    const stored = files.map((f) => readFileSync(join(f.parentPath, f.name)).toString("latin1"));
    // The sweep sees what it should: provider names on disk, the provider's refusal in the log.
    expect(stored.some((f) => f.includes("s-refused"))).toBe(true);
    expect(logLines.some((l) => l.includes("Incorrect API key provided: [redacted]"))).toBe(true);
    const leaks = SECRETS.flatMap((s) => [
      ...answers.filter((a) => a.includes(s)).map(() => `answer: ${s}`),
      ...logLines.filter((l) => l.includes(s)).map(() => `log: ${s}`),
      ...stored.filter((f) => f.includes(s)).map(() => `file: ${s}`),
    ]);
    expect(leaks).toEqual([]);
  });
});
