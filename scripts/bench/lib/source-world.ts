// What `bench pipeline` and `bench freshness` both stand on: a throwaway source database on the
// local PostgreSQL with synthetic rows, the fake emb_a provider with no latency and no limit, the
// real service process signed in over REST, and a connection and provider to make tables with.
// `cleanup()` stops the service first (it holds the replication slots), then drops the rest.
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../../test/fakes/embeddings/server.ts";
import { Api, signUp, startService, type Service } from "./pipeline-service.ts";

export const ADMIN_URL = process.env.VECSYNC_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const MODEL = "text-embedding-3-small";
export const DIMS = 256;

export const COLUMNS = [
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "price", role: "metadata", filter_type: "float" },
];

/** Rows of ~200 bytes: a short title, a ~140-byte body, 20 categories, a price. */
export async function createSource(sql: postgres.Sql, name: string, rows: number, extra = ""): Promise<void> {
  await sql.unsafe(`CREATE TABLE ${name} (id bigint PRIMARY KEY, title text, body text, category text, price double precision${extra ? `, ${extra}` : ""});
    INSERT INTO ${name} (id, title, body, category, price)
    SELECT g, 'Item ' || g || ' ' || left(md5(g::text), 12), 'A description of item ' || g || ': ' || repeat(md5(g::text), 3),
           'cat' || (g % 20), (g % 10000) / 100.0
    FROM generate_series(1, ${rows}) g`);
  await sql.unsafe(`VACUUM ANALYZE ${name}`);
}

export type TableView = { id: string; sync_status: string; synced_rows: number; total_rows: number };

export type SourceWorld = {
  database: string;
  sourceUrl: URL;
  dataDir: string;
  sql: postgres.Sql;
  fake: FakeEmbeddings;
  service: Service;
  /** The organization's key; `envApi` also names the connection's environment. */
  api: Api;
  envApi: Api;
  tableBody(name: string, source: string, columns: object[], syncMode: string): object;
  cleanup(): Promise<void>;
};

export type WorldOptions = {
  env?: Record<string, string>;
  /** The service's stderr goes there. */
  logTo?: string;
  /** Another command than `bun src/main.ts` (a profiler's). */
  cmd?: string[];
  /** How long `cleanup` gives the service to stop (a profiled one writes its profile then). */
  stopWaitMs?: number;
};

/** Creates the database, runs `fill` on it, then starts the fake provider and the service. */
export async function openSourceWorld(fill: (sql: postgres.Sql) => Promise<void>, opts: WorldOptions = {}): Promise<SourceWorld> {
  const database = `vecsync_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sourceUrl = new URL(ADMIN_URL);
  sourceUrl.pathname = `/${database}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vecsync-bench-"));
  const parts: { sql?: postgres.Sql; fake?: FakeEmbeddings; service?: Service } = {};
  let cleaned: Promise<void> | null = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      if (parts.service) {
        await Promise.race([parts.service.stop("SIGTERM"), Bun.sleep(opts.stopWaitMs ?? 5000)]);
        await Promise.resolve(parts.service[Symbol.asyncDispose]()).catch(() => {});
      }
      await parts.fake?.stop().catch(() => {});
      await parts.sql?.end({ timeout: 0 }).catch(() => {});
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await admin`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = ${database} AND NOT active`.catch(() => {});
        await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await admin`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = ${database}`.catch(() => {});
      } finally {
        await admin.end({ timeout: 5 });
        rmSync(dataDir, { recursive: true, force: true });
      }
    })());
  try {
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${database}`);
    await admin.end({ timeout: 5 });
    const sql = (parts.sql = postgres(sourceUrl.toString(), { max: 4, onnotice: () => {} }));
    await fill(sql);
    // Zero latency and a limit far above anything reachable, stated in OpenAI's rate-limit headers:
    // the driver's governor adopts it, so the bench measures the pipeline, not a token budget.
    const fake = (parts.fake = await startFakeEmbeddings("emb_a", {
      switches: { record: false, stateLimits: true, rateLimit: { requestsPerMinute: 10_000_000, tokensPerMinute: 10_000_000_000, burstSec: 6 } },
    }));
    const service = (parts.service = await startService({ VECSYNC_EMB_A_URL: fake.url, VECSYNC_FREE_VECTOR_BUDGET: "100000000", ...opts.env }, dataDir, opts.logTo, opts.cmd));
    const { api } = await signUp(service);
    const user = decodeURIComponent(sourceUrl.username) || "postgres";
    const connection = await api.call("POST", "/v1/providers/db_relational/connections", {
      name: "bench-source",
      mode: "managed",
      credentials: { host: sourceUrl.hostname, port: Number(sourceUrl.port || 5432), database, user, password: decodeURIComponent(sourceUrl.password) || "unused-trust-auth", ssl_mode: "disable" },
    });
    const envApi = api.withHeaders({ "x-environment-id": connection.environment_id });
    const provider = await envApi.call("POST", "/v1/embedding-providers", { name: "fake-emb-a", provider: "emb_a", api_key: fake.apiKey });
    const tableBody = (name: string, source: string, columns: object[], syncMode: string) => ({
      name, connection_id: connection.id, embedding_provider_id: provider.id, source_table: source, primary_key_column: "id",
      columns, embedding_model: MODEL, embedding_dimensions: DIMS, sync_mode: syncMode,
    });
    return { database, sourceUrl, dataDir, sql, fake, service, api, envApi, tableBody, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Polls the table until it is `synced` (or `error`, or the deadline). */
export async function waitSynced(api: Api, id: string, deadline: number): Promise<TableView> {
  for (;;) {
    const view = await api.call<TableView>("GET", `/v1/vector-tables/${id}`);
    if (view.sync_status === "synced" || view.sync_status === "error" || Date.now() > deadline) return view;
    await Bun.sleep(200);
  }
}
