// A metrics test world: the whole service on a real loopback socket with its log captured, the
// fake emb_a provider on its own port, a throwaway Postgres source table, and an organization,
// connection and provider made through the API. Plus a reader of the Prometheus text format.
import { createLogger } from "../../../src/shared/log.ts";
import { listen, type RunningServer } from "../../../src/server.ts";
import { resolveConfig } from "../../../src/config.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { openVectorStore, type Services } from "../../../src/services.ts";
import { buildServices } from "../../../src/wiring.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { tempDir, throwawayPostgres, type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, newOrganization, type TestOrg } from "../../helpers/organizations.ts";
import { createSourceTable } from "../sync/world.ts";

export type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition (comments skipped, label values unescaped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[k!] = v!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `where` (0 when there is none). */
export function total(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export type LogLine = Record<string, unknown>;

export type MetricsWorld = {
  url: string;
  services: Services;
  /** TestApp-shaped, over the socket: the organization helpers take it. */
  app: TestApp;
  log: LogLine[];
  fake: FakeEmbeddings;
  pg: ThrowawayDatabase;
  org: TestOrg;
  connectionId: string;
  providerId: string;
  /** GET /metrics over the socket (with `headers`), parsed; throws unless 200. */
  scrape(headers?: Record<string, string>): Promise<{ text: string; samples: Sample[] }>;
} & AsyncDisposable;

export async function createMetricsWorld(opts: { rows?: number; env?: Record<string, string> } = {}): Promise<MetricsWorld> {
  const dir = tempDir();
  const fake = await startFakeEmbeddings("emb_a");
  const config = resolveConfig({ "data-dir": dir.path }, { VECSYNC_LOG_LEVEL: "info", VECSYNC_EMB_A_URL: fake.url, VECSYNC_SYNC_INTERVAL: "3600", ...opts.env });
  const database = await openDatabase(config.databaseUrl);
  await migrate(database.client);
  const log: LogLine[] = [];
  const logger = createLogger(config.logLevel, { write: (line: string) => void log.push(JSON.parse(line)) });
  const services = buildServices(config, database, await openVectorStore(config, database, logger), logger);
  const server: RunningServer = listen(services, "127.0.0.1", 0);
  services.scheduler.start();
  const pg = await throwawayPostgres();
  await createSourceTable(pg.sql, opts.rows ?? 0);

  const app: TestApp = {
    services,
    config,
    request(method, path, { body, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) } };
      if (body !== undefined) init.body = JSON.stringify(body);
      return fetch(`${server.url}${path}`, init);
    },
    async [Symbol.asyncDispose]() {},
  };
  const org = await newOrganization(app);
  const url = new URL(pg.url);
  const credentials = { host: url.hostname, port: Number(url.port || 5432), database: pg.name, user: url.username || "postgres", password: "unused-password", ssl_mode: "disable" };
  const conn = await app.request("POST", "/v1/providers/db_relational/connections", { headers: org.owner.key, body: { name: "src", mode: "managed", credentials } });
  if (conn.status !== 201) throw new Error(`connection: ${conn.status} ${await conn.text()}`);
  const prov = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: "fake-a", provider: "emb_a", api_key: fake.apiKey } });
  if (prov.status !== 201) throw new Error(`provider: ${prov.status} ${await prov.text()}`);

  return {
    url: server.url,
    services,
    app,
    log,
    fake,
    pg,
    org,
    connectionId: (await json(conn)).id,
    providerId: (await json(prov)).id,
    async scrape(headers = {}) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text}`);
      return { text, samples: parseExposition(text) };
    },
    async [Symbol.asyncDispose]() {
      await server.stop();
      await services.scheduler.stop();
      await services.platform.close();
      await services.vectors.close();
      database.close();
      await pg[Symbol.asyncDispose]();
      await fake.stop();
      dir[Symbol.dispose]();
    },
  };
}
