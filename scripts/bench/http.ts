// `bun run bench http [--rows N] [--secs S] [--connections C] [--dims D]`: end-to-end query
// throughput over HTTP, the way a client sees it. The real service process (as in `bench
// pipeline`) with the in-process `local` provider (no network cost for the query embedding),
// a throwaway Postgres table of N rows (default 100,000) backfilled at D dimensions (default 512),
// then C keep-alive connections (default 32) from this process — the load generator shares the
// machine's cores with the service, as a user's would on one box — each sending its next request
// as soon as the last is answered, for S seconds (default 15) per workload:
//   GET /v1/vector-tables/{id}            the baseline: auth + one record read, no search
//   POST …/query unfiltered               top 10
//   POST …/query category = one of 20      a 5 % keyword filter
//   POST …/query price < 10                a ~10 % range filter
// Figures: QPS, p50/p99 latency, and the service's CPU per request (from /proc) beside the
// baseline's. `--only TEXT` runs the workloads whose name contains TEXT; `--profile DIR` writes the
// service's CPU profile of the workloads (Bun's --cpu-prof-md; the service restarts on the same data
// for them) there; `--metrics` prints the service's own /metrics
// (vecsync_* series, no buckets) after the run. Bounded; the database, service and data dir are removed at the end.
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fmt, percentile, progress, table } from "./lib/measure.ts";
import { Api, cpuSeconds, mb, procStatusKb, signUp, startService, waitIdle, type Service } from "./lib/pipeline-service.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(3),
  options: {
    rows: { type: "string", default: "100000" },
    secs: { type: "string", default: "15" },
    connections: { type: "string", default: "32" },
    dims: { type: "string", default: "512" },
    only: { type: "string" },
    profile: { type: "string" },
    metrics: { type: "boolean", default: false },
  },
});
const ROWS = Number(args.rows);
const SECS = Number(args.secs);
const CONNECTIONS = Number(args.connections);
const DIMS = Number(args.dims);
const ADMIN_URL = process.env.VECSYNC_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const WORDS = ["river", "lantern", "silent", "copper", "garden", "winter", "market", "signal", "harbor", "meadow", "engine", "violet", "canyon", "ember", "orbit", "quartz"];

const database = `vecsync_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const sourceUrl = new URL(ADMIN_URL);
sourceUrl.pathname = `/${database}`;
const dataDir = mkdtempSync(join(tmpdir(), "vecsync-bench-http-"));
let service: Service | null = null;

async function cleanup(): Promise<void> {
  if (service) {
    await Promise.race([service.stop("SIGTERM"), Bun.sleep(5000)]);
    await Promise.resolve(service[Symbol.asyncDispose]()).catch(() => {});
  }
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
  await admin.end({ timeout: 5 });
  rmSync(dataDir, { recursive: true, force: true });
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

type Result = { name: string; count: number; errors: number; secs: number; p50: number; p99: number; cpuMs: number };

/** C loops, each sending its next request when the last is answered, for SECS seconds. */
async function load(name: string, send: (i: number) => Promise<Response>, pid: number): Promise<Result> {
  const times: number[] = [];
  let errors = 0;
  let firstError = "";
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const end = t0 + SECS * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const i = n++;
        const s = performance.now();
        const res = await send(i);
        const body = await res.text();
        times.push(performance.now() - s);
        if (!res.ok) {
          errors++;
          firstError ||= `${res.status} ${body.slice(0, 200)}`;
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const cpuMs = ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, times.length);
  if (firstError) progress(`${name}: ${errors} errors, first: ${firstError}`);
  times.sort((a, b) => a - b);
  return { name, count: times.length, errors, secs, p50: percentile(times, 50), p99: percentile(times, 99), cpuMs };
}

try {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  await admin.end({ timeout: 5 });
  const sql = postgres(sourceUrl.toString(), { max: 2, onnotice: () => {} });
  await sql.unsafe(`CREATE TABLE docs (id bigint PRIMARY KEY, body text, category text, price double precision);
    INSERT INTO docs SELECT g, 'item ' || g || ' ' || (ARRAY[${WORDS.map((w) => `'${w}'`).join(",")}])[1 + g % 16] || ' ' || (ARRAY[${WORDS.map((w) => `'${w}'`).join(",")}])[1 + (g / 16) % 16] || ' ' || md5(g::text),
      'cat' || (g % 20), (g % 10000) / 100.0 FROM generate_series(1, ${ROWS}) g`);
  await sql.unsafe("VACUUM ANALYZE docs");
  await sql.end({ timeout: 5 });

  const env = { VECSYNC_FREE_VECTOR_BUDGET: "100000000", VECSYNC_LOG_LEVEL: "warn" };
  service = await startService(env, dataDir);
  let { api } = await signUp(service);
  const connection = await api.call("POST", "/v1/providers/db_relational/connections", {
    name: "bench-source", mode: "managed",
    credentials: { host: sourceUrl.hostname, port: Number(sourceUrl.port || 5432), database, user: decodeURIComponent(sourceUrl.username) || "postgres", password: "unused-trust-auth", ssl_mode: "disable" },
  });
  const envApi = api.withHeaders({ "x-environment-id": connection.environment_id });
  const provider = await envApi.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" });
  const created = await envApi.call("POST", "/v1/vector-tables", {
    name: "bench-http", connection_id: connection.id, embedding_provider_id: provider.id, source_table: "docs", primary_key_column: "id",
    columns: [{ name: "body", role: "embedding", ordinal: 1 }, { name: "category", role: "metadata", filter_type: "keyword" }, { name: "price", role: "metadata", filter_type: "float" }],
    embedding_model: "local-lexical-v1", embedding_dimensions: DIMS, sync_mode: "batch",
  });
  await api.call("POST", `/v1/vector-tables/${created.id}/backfill`);
  const t0 = performance.now();
  for (;;) {
    const view = await api.call("GET", `/v1/vector-tables/${created.id}`);
    if (view.sync_status === "synced") break;
    if (view.sync_status === "error") throw new Error(`backfill failed: ${view.last_error}`);
    await Bun.sleep(500);
  }
  progress(`backfilled ${ROWS} rows at ${DIMS} dims in ${((performance.now() - t0) / 1000).toFixed(1)} s; RSS ${mb(procStatusKb(service.pid, "VmRSS"))}`);
  await api.call("POST", `/v1/vector-tables/${created.id}/sync/pause`);
  await waitIdle(service.pid, 1000, 60_000); // the stray sweep after the backfill
  if (args.profile) {
    // --profile DIR: the service restarts on the same data under Bun's sampling profiler (DIR/*.md
    // at exit), so the profile holds the query workloads, not the backfill.
    await service.stop("SIGTERM");
    await Promise.resolve(service[Symbol.asyncDispose]()).catch(() => {});
    service = await startService(env, dataDir, undefined, [process.execPath, "--cpu-prof-md", `--cpu-prof-dir=${args.profile}`, join(import.meta.dir, "../../src/main.ts")]);
    api = api.at(service.url);
  }
  await waitIdle(service.pid, 1000, 60_000);

  const auth = { authorization: (api as unknown as { headers: Record<string, string> }).headers.authorization! };
  const url = `${service.url}/v1/vector-tables/${created.id}`;
  const text = (i: number) => `${WORDS[i % 16]} ${WORDS[(i * 7) % 16]} item ${(i * 7919) % ROWS}`;
  const query = (filters?: (i: number) => object) => (i: number) =>
    fetch(`${url}/query`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ query: text(i), limit: 10, ...(filters ? { filters: filters(i) } : {}) }) });
  const workloads: [string, (i: number) => Promise<Response>][] = [
    ["GET table (baseline)", () => fetch(url, { headers: auth })],
    ["query, unfiltered", query()],
    ["query, category = (5 %)", query((i) => ({ category: { eq: `cat${i % 20}` } }))],
    ["query, price < 10 (10 %)", query(() => ({ price: { lt: 10 } }))],
  ];
  const results: Result[] = [];
  for (const [name, send] of workloads) {
    if (args.only && !name.includes(args.only)) continue;
    for (let i = 0; i < 50; i++) await (await send(i)).text(); // warm-up
    const r = await load(name, send, service.pid);
    results.push(r);
    progress(`${name}: ${Math.round(r.count / r.secs)} QPS, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, ${fmt(r.cpuMs, 3)} ms service CPU/request`);
  }
  const base = results[0];
  console.log(`\nhttp bench: ${ROWS} rows × ${DIMS} dims, local-lexical-v1, ${CONNECTIONS} connections, ${SECS} s each, load generator in this process on the same cores`);
  console.log(table(
    ["workload", "QPS", "p50 ms", "p99 ms", "errors", "service CPU ms/request", "QPS vs GET"],
    results.map((r) => [r.name, Math.round(r.count / r.secs), fmt(r.p50), fmt(r.p99), r.errors, fmt(r.cpuMs, 3), base ? fmt(r.count / r.secs / (base.count / base.secs)) : "n/a"]),
  ));
  if (args.metrics) {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    console.log(`\n/metrics after the run (vecsync_* series, _bucket lines left out):\n${text.split("\n").filter((l) => l.startsWith("vecsync_") && !l.includes("_bucket")).join("\n")}`);
  }
} finally {
  await cleanup();
}
