// `bun run bench platform [--rows N] [--dims D] [--queries Q] [--selectivity 100,10,1] [--backfill-rows N] [--no-backfill] [--no-query]`:
// platform mode on Postgres (pgvector in the source database), against a throwaway database on the
// local PostgreSQL (VECSYNC_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres),
// each figure beside a baseline measured in the same run on the same table:
//   1. queries (lib/platform-query.ts): N × D (default 100,000 × 384) clustered vectors; per
//      selectivity p50/p99 and recall@10 of vecsync's search against the same SQL sent directly,
//      and against the hand-written pgvector query;
//   2. backfill: the real service process fills a platform table from a source table of
//      --backfill-rows rows (default N) with the fake emb_a provider at zero latency (an instant
//      embedder: the figures are the pipeline's own), in rows/s until `synced`; against `COPY` of
//      the same rows into a table LIKE the platform table (same columns, same indexes, HNSW included).
// The database (maintenance_work_mem 1 GB for it, as a DBA would set for HNSW builds), the service
// and its data dir are removed at the end, also on failure or Ctrl-C.
import postgres from "postgres";
import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../test/fakes/embeddings/server.ts";
import { fmt, progress, table } from "./lib/measure.ts";
import { signUp, startService, type Service } from "./lib/pipeline-service.ts";
import { queryPhase, type QueryReport } from "./lib/platform-query.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(3),
  options: {
    rows: { type: "string", default: "100000" },
    dims: { type: "string", default: "384" },
    queries: { type: "string", default: "200" },
    selectivity: { type: "string", default: "100,50,10,5,2,1,0.5,0.1" },
    "backfill-rows": { type: "string" },
    "no-backfill": { type: "boolean", default: false },
    "no-query": { type: "boolean", default: false },
  },
});
const ROWS = Number(args.rows);
const DIMS = Number(args.dims);
const BACKFILL_ROWS = Number(args["backfill-rows"] ?? ROWS);
const ADMIN_URL = process.env.VECSYNC_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `vecsync_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/${database}`;
const credentials = { host: url.hostname, port: Number(url.port || 5432), database, user: decodeURIComponent(url.username) || "postgres", password: decodeURIComponent(url.password) || "unused-trust-auth", sslMode: "disable" };
const dataDir = mkdtempSync(join(tmpdir(), "vecsync-bench-platform-"));
const loadAtStart = loadavg().map((l) => l.toFixed(2)).join(", ");

let service: Service | null = null;
let fake: FakeEmbeddings | null = null;
let cleaned: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    if (service) await Promise.race([service.stop("SIGTERM"), Bun.sleep(5000)]).catch(() => {});
    await fake?.stop().catch(() => {});
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await admin.end({ timeout: 5 });
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaned;
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

async function psql(script: string): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn(["psql", url.toString(), "-v", "ON_ERROR_STOP=1", "-q", "-c", script], { stdout: "ignore", stderr: "pipe" });
  const err = await new Response(proc.stderr).text();
  if ((await proc.exited) !== 0) throw new Error(`psql: ${err.trim()}`);
  return performance.now() - t0;
}

type Backfill = { rows: number; seconds: number; status: string; copySeconds: number; indexSeconds: number };

async function backfillPhase(sql: postgres.Sql): Promise<Backfill> {
  await sql.unsafe(`CREATE TABLE items (id integer PRIMARY KEY, body text NOT NULL, price double precision NOT NULL);
    INSERT INTO items SELECT g, 'Item ' || g || ': ' || repeat(md5(g::text), 3), (g % 10000) / 100.0 FROM generate_series(1, ${BACKFILL_ROWS}) g`);
  await sql.unsafe("VACUUM ANALYZE items");
  fake = await startFakeEmbeddings("emb_a", { switches: { record: false, stateLimits: true, rateLimit: { requestsPerMinute: 10_000_000, tokensPerMinute: 10_000_000_000, burstSec: 6 } } });
  service = await startService({ VECSYNC_EMB_A_URL: fake.url, VECSYNC_SYNC_INTERVAL: "3600", VECSYNC_FREE_VECTOR_BUDGET: "100000000", VECSYNC_LOG_LEVEL: "warn" }, dataDir);
  const { api } = await signUp(service);
  const connection = await api.call("POST", "/v1/providers/db_relational/connections", {
    name: "bench-platform",
    mode: "platform",
    credentials: { host: credentials.host, port: credentials.port, database, user: credentials.user, password: credentials.password, ssl_mode: "disable" },
  });
  const provider = await api.call("POST", "/v1/embedding-providers", { name: "fake-emb-a", provider: "emb_a", api_key: fake.apiKey });
  const created = await api.call("POST", "/v1/vector-tables", {
    name: "bench",
    connection_id: connection.id,
    embedding_provider_id: provider.id,
    source_table: "items",
    primary_key_column: "id",
    columns: [{ name: "body", role: "embedding" }, { name: "price", role: "metadata", filter_type: "float" }],
    embedding_model: "text-embedding-3-small",
    embedding_dimensions: DIMS,
  });
  progress(`backfill: ${BACKFILL_ROWS} rows into ${created.platform_vector_ref} through the service`);
  const t0 = performance.now();
  await api.call("POST", `/v1/vector-tables/${created.id}/backfill`);
  let view: { sync_status: string; synced_rows: number };
  let lastPrint = t0;
  for (;;) {
    view = await api.call("GET", `/v1/vector-tables/${created.id}`);
    if (view.sync_status === "synced" || view.sync_status === "error") break;
    if (performance.now() - lastPrint > 10_000) {
      lastPrint = performance.now();
      progress(`backfill: ${view.synced_rows} rows, ${Math.round(view.synced_rows / ((lastPrint - t0) / 1000))} rows/s`);
    }
    await Bun.sleep(100);
  }
  const seconds = (performance.now() - t0) / 1000;
  progress(`backfill: ${view.sync_status} in ${seconds.toFixed(1)} s`);
  await api.call("POST", `/v1/vector-tables/${created.id}/sync/pause`);

  // COPY of the same rows (vecsync's own output, vectors included) into a table LIKE it.
  const csv = join(dataDir, "copy.csv");
  const ref = created.platform_vector_ref as string;
  await psql(`\\copy (SELECT * FROM ${ref}) TO '${csv}' WITH (FORMAT csv)`);
  // LIKE it with every index but the HNSW one, which is built after the load, as vecsync's first backfill does.
  await psql(`CREATE TABLE copy_target (LIKE ${ref} INCLUDING ALL)`);
  const [hnsw] = await sql`SELECT indexname FROM pg_indexes WHERE tablename = 'copy_target' AND indexdef LIKE '%USING hnsw%'`;
  await psql(`DROP INDEX "${hnsw!.indexname}"`);
  const copySeconds = (await psql(`\\copy copy_target FROM '${csv}' WITH (FORMAT csv)`)) / 1000;
  const indexSeconds = (await psql(`CREATE INDEX ON copy_target USING hnsw (embedding vector_cosine_ops)`)) / 1000;
  unlinkSync(csv);
  progress(`COPY baseline: ${BACKFILL_ROWS} rows in ${copySeconds.toFixed(1)} s, HNSW build ${indexSeconds.toFixed(1)} s`);
  return { rows: view.synced_rows, seconds, status: view.sync_status, copySeconds, indexSeconds };
}

try {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  await admin.unsafe(`ALTER DATABASE ${database} SET maintenance_work_mem = '1GB'`);
  await admin.end({ timeout: 5 });
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  await sql`CREATE EXTENSION vector`;
  const selectivities = args.selectivity!.split(",").map(Number);
  const queries: QueryReport | null = args["no-query"] ? null : await queryPhase(credentials, url.toString(), { rows: ROWS, dims: DIMS, queries: Number(args.queries), selectivities });
  const backfill = args["no-backfill"] ? null : await backfillPhase(sql);
  await sql.end({ timeout: 5 });

  console.log(`\n## bench platform: pgvector in the source, ${ROWS.toLocaleString("en")} × ${DIMS}, top-10\n`);
  if (queries) {
    const find = (engine: string, s: number) => queries.rows.find((r) => r.engine === engine && r.selectivity === s)!.sample;
    console.log(table(
      ["selectivity", "vecsync p50 / p99 ms", "same SQL p50 / p99 ms", "p50 ratio", "raw ANN p50 / p99 ms", "recall@10 vecsync / same SQL / raw ANN", "vecsync paths"],
      selectivities.map((s) => {
        const v = find("vecsync", s), same = find("raw same SQL", s), ann = find("raw ANN", s);
        return [`${s}%`, `${fmt(v.p50, 2)} / ${fmt(v.p99, 2)}`, `${fmt(same.p50, 2)} / ${fmt(same.p99, 2)}`, fmt(v.p50 / same.p50), `${fmt(ann.p50, 2)} / ${fmt(ann.p99, 2)}`, `${fmt(v.recall, 3)} / ${fmt(same.recall, 3)} / ${fmt(ann.recall, 3)}`, queries.rows.find((r) => r.engine === "vecsync" && r.selectivity === s)!.paths ?? ""];
      }),
    ));
    console.log(`\nLoad through the store ${fmt(queries.loadSeconds, 1)} s, HNSW (m 16, ef_construction 64) built at the swap ${fmt(queries.indexSeconds, 1)} s, ${fmt(queries.bytesPerVector, 0)} B/row (table + indexes)`);
  }
  if (backfill) {
    const rate = backfill.rows / backfill.seconds, copyRate = backfill.rows / backfill.copySeconds, withIndex = backfill.rows / (backfill.copySeconds + backfill.indexSeconds);
    const n = (x: number) => Math.round(x).toLocaleString("en");
    console.log(`\nBackfill through the service (fake emb_a at zero latency, ${DIMS} dims, HNSW built at its end): ${n(rate)} rows/s (${backfill.rows} rows in ${fmt(backfill.seconds, 1)} s, ${backfill.status})`);
    console.log(`COPY of the same rows into a table LIKE it: ${n(copyRate)} rows/s (${fmt(backfill.copySeconds, 1)} s), ${n(withIndex)} rows/s with its HNSW build (${fmt(backfill.indexSeconds, 1)} s)`);
    console.log(`vecsync / COPY: ${fmt(rate / copyRate, 2)}; vecsync / (COPY + HNSW build): ${fmt(rate / withIndex, 2)}`);
  }
  console.log(`Machine load (1/5/15-min averages): at start ${loadAtStart}; at the end ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
} finally {
  await cleanup();
}
