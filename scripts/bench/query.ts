// `bun run bench query [--large] [--clusters N] [--queries N] [--scalar i8|f16|f32] [--m 16] [--ef 64]
//   [--ef-add 128] [--cap-scale X] [--selectivity 1,2,5] [--no-pg] [--no-raw]`
// (--cap-scale 1e9 / 1e-9 force the exact / HNSW path: how planner.ts was calibrated)
// The managed vector store on synthetic clustered data (default 100,000 × 384; --large:
// 1,000,000 × 768), per filter selectivity: p50/p99, QPS, recall@10 against exact ground truth,
// build time and bytes per vector; beside raw usearch HNSW (f16, the issue's reference, and the
// store's scalar) and pgvector HNSW measured in the
// same run on the same data. Progress goes to stderr, the tables to stdout.
import { createClient } from "@libsql/client";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Index, MetricKind, ScalarKind } from "usearch";
import { VectorStore } from "../../src/drivers/vector-store/index.ts";
import type { ScalarKindName, UpsertRow } from "../../src/drivers/vector-store/types.ts";
import { groundTruth, makeDataset, recallAt } from "./lib/data.ts";
import { fmt, measure, progress, type Sample, table } from "./lib/measure.ts";
import { startPgvector } from "./lib/pgvector.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(3),
  options: {
    large: { type: "boolean", default: false },
    clusters: { type: "string" },
    queries: { type: "string" },
    scalar: { type: "string", default: "i8" },
    m: { type: "string", default: "16" },
    ef: { type: "string", default: "64" },
    "ef-add": { type: "string", default: "128" },
    "cap-scale": { type: "string" },
    "no-pg": { type: "boolean", default: false },
    "no-raw": { type: "boolean", default: false },
    selectivity: { type: "string" },
  },
});

const N = args.large ? 1_000_000 : 100_000;
const DIMS = args.large ? 768 : 384;
const QUERIES = Number(args.queries ?? (args.large ? 100 : 300));
const K = 10;
const THREADS = 2;
// percent of rows with price < s; --selectivity 1,2,3 for calibration runs
const SELECTIVITY = args.selectivity ? args.selectivity.split(",").map(Number) : [100, 50, 5, 0.5, 0.05];
const params = { scalar: args.scalar as ScalarKindName, connectivity: Number(args.m), expansionAdd: Number(args["ef-add"]), expansionSearch: Number(args.ef), threads: THREADS };

const loadAtStart = loadavg().map((l) => l.toFixed(2)).join(", ");
progress(`dataset ${N} × ${DIMS}${args.clusters ? ` (${args.clusters} clusters)` : ""}, ${QUERIES} queries, index ${JSON.stringify(params)}`);
const data = makeDataset(N, DIMS, QUERIES, 42, args.clusters ? Number(args.clusters) : undefined);
progress("ground truth (exact, brute force)");
const truth = new Map([...new Set([...SELECTIVITY, 100])].map((s) => [s, groundTruth(data, s, K, THREADS)]));

// ---- vecsync managed store -------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), "vecsync-bench-"));
const client = createClient({ url: `file:${join(dir, "vecsync.db")}` });
await client.execute("PRAGMA journal_mode = WAL");
const exactCapScale = args["cap-scale"] ? Number(args["cap-scale"]) : undefined;
const store = await VectorStore.open({ client, indexDir: join(dir, "indexes"), index: params, exactCapScale });
await store.createCollection("bench", { dimensions: DIMS, numericPk: true, metadata: [{ name: "price", type: "float" }] });
let t0 = performance.now();
const BATCH = 1000;
for (let start = 0; start < N; start += BATCH) {
  const rows: UpsertRow[] = [];
  for (let i = start; i < Math.min(N, start + BATCH); i++) {
    rows.push({ pk: String(i), textHash: "t", metaHash: "m", text: `doc ${i}`, metadata: { price: data.price[i]! }, vector: data.vectors.subarray(i * DIMS, (i + 1) * DIMS) });
  }
  await store.upsert("bench", rows);
  if ((start / BATCH) % 50 === 0) progress(`vecsync: upserted ${start + rows.length} rows`);
}
const buildSeconds = (performance.now() - t0) / 1000;
t0 = performance.now();
await store.checkpoint("bench");
const checkpointSeconds = (performance.now() - t0) / 1000;
t0 = performance.now();
const calibration = await store.calibrate("bench");
const calibrateSeconds = (performance.now() - t0) / 1000;
const stats = await store.stats("bench");
const indexFileBytes = readdirSync(join(dir, "indexes")).filter((f) => f.endsWith(".usearch")).reduce((s, f) => s + statSync(join(dir, "indexes", f)).size, 0);
progress(`vecsync: built in ${buildSeconds.toFixed(1)} s (libSQL + HNSW), checkpoint ${checkpointSeconds.toFixed(1)} s, calibration ${calibrateSeconds.toFixed(1)} s`);

const results: { engine: string; selectivity: number; sample: Sample; paths?: string }[] = [];
for (const s of SELECTIVITY) {
  const paths = new Map<string, number>();
  const filter = s >= 100 ? undefined : { price: { lt: s } };
  const sample = await measure(QUERIES, async (i) => {
    const res = await store.search("bench", { vector: data.queries[i]!, k: K, filter });
    paths.set(res.path, (paths.get(res.path) ?? 0) + 1);
    return recallAt(res.hits.map((h) => Number(h.pk)), truth.get(s)![i]!);
  });
  results.push({ engine: "vecsync", selectivity: s, sample, paths: [...paths].map(([p, c]) => `${p}:${c}`).join(" ") });
  progress(`vecsync ${s}%: p50 ${fmt(sample.p50, 3)} ms, recall ${fmt(sample.recall, 3)}`);
}
await store.close();
client.close();
rmSync(dir, { recursive: true, force: true });

// ---- raw usearch: f16 (the issue's reference) and the store's own scalar, no filter support --
let rawBuildSeconds = NaN;
let rawBytes = NaN;
if (!args["no-raw"]) {
  const scalars = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 };
  for (const scalar of [...new Set(["f16", params.scalar] as ScalarKindName[])]) {
    const raw = new Index({ dimensions: DIMS, metric: MetricKind.Cos, quantization: scalars[scalar], connectivity: params.connectivity, expansion_add: params.expansionAdd, expansion_search: params.expansionSearch, multi: false });
    t0 = performance.now();
    raw.add(BigUint64Array.from({ length: N }, (_, i) => BigInt(i)), data.vectors, THREADS);
    const seconds = (performance.now() - t0) / 1000;
    const rawFile = join(tmpdir(), `vecsync-bench-raw-${process.pid}.usearch`);
    raw.save(rawFile);
    const bytes = statSync(rawFile).size / N;
    rmSync(rawFile);
    if (scalar === params.scalar) [rawBuildSeconds, rawBytes] = [seconds, bytes];
    progress(`raw usearch ${scalar}: built in ${seconds.toFixed(1)} s`);
    const sample = await measure(QUERIES, async (i) => {
      const m = raw.search(data.queries[i]!, K, 1);
      return recallAt(Array.from(m.keys, Number), truth.get(100)![i]!);
    });
    results.push({ engine: `raw usearch ${scalar}`, selectivity: 100, sample });
  }
}

// ---- pgvector HNSW on the local PostgreSQL -----------------------------------------------
let pgNote = "skipped (--no-pg)";
let pgBuild = "";
let pgClose: (() => Promise<void>) | null = null;
if (!args["no-pg"]) {
  progress("pgvector: loading");
  const pg = await startPgvector(data, { m: 16, efConstruction: 64, efSearch: 100 });
  if (typeof pg === "string") pgNote = `skipped: ${pg}`;
  else {
    pgNote = "m=16, ef_construction=64, ef_search=100, iterative_scan=relaxed_order, btree on price";
    pgBuild = `pgvector: load ${fmt(pg.loadSeconds, 1)} s, HNSW build ${fmt(pg.buildSeconds, 1)} s, ${fmt(pg.bytesPerVector, 0)} B/vector (table + indexes)`;
    const pgQueries = Math.min(QUERIES, 200);
    for (const s of SELECTIVITY) {
      const sample = await measure(pgQueries, async (i) => recallAt(await pg.search(data.queries[i]!, s, K), truth.get(s)![i]!));
      results.push({ engine: "pgvector", selectivity: s, sample });
      progress(`pgvector ${s}%: p50 ${fmt(sample.p50, 3)} ms, recall ${fmt(sample.recall, 3)}`);
    }
    // Dropped after the report: DROP DATABASE can wait on other sessions of the shared server.
    pgClose = () => pg.close();
  }
}

// ---- report ------------------------------------------------------------------------------
const find = (engine: string, s: number) => results.find((r) => r.engine === engine && r.selectivity === s)?.sample;
console.log(`\n## bench query: ${N.toLocaleString("en")} × ${DIMS}${args.clusters ? ` (${args.clusters} clusters)` : ""}, top-${K}, ${QUERIES} queries, one search thread\n`);
console.log(table(
  ["engine", "selectivity", "p50 ms", "p99 ms", "QPS", "recall@10", "paths"],
  results.map((r) => [r.engine, `${r.selectivity}%`, fmt(r.sample.p50, 3), fmt(r.sample.p99, 3), fmt(r.sample.qps, 0), fmt(r.sample.recall, 3), r.paths ?? ""]),
));
console.log("\nRatios (vecsync against the baselines, same data, same run):\n");
console.log(table(
  ["selectivity", "p50 / raw usearch f16", "QPS × pgvector", "recall vecsync / pgvector"],
  SELECTIVITY.map((s) => {
    const v = find("vecsync", s)!;
    const raw = find("raw usearch f16", s);
    const pg = find("pgvector", s);
    return [`${s}%`, raw ? fmt(v.p50 / raw.p50) : "n/a", pg ? fmt(v.qps / pg.qps, 1) : "n/a", pg ? `${fmt(v.recall, 3)} / ${fmt(pg.recall, 3)}` : "n/a"];
  }),
));
console.log(`\nBuild: vecsync ${fmt(buildSeconds, 1)} s for ${N} upserts (libSQL rows + HNSW, ${THREADS} threads), checkpoint ${fmt(checkpointSeconds, 1)} s; raw usearch ${params.scalar} build ${fmt(rawBuildSeconds, 1)} s`);
const bands = calibration?.bands.map((b) => `${b.selectivity * 100}% → ${b.choice === "exact" ? "exact" : `depth ${b.choice}`} (${fmt(b.recall, 3)})`).join(", ");
console.log(`Calibration (filtered-search depth measured on this data, ${fmt(calibrateSeconds, 1)} s): ${bands || "none"}`);
console.log(`Bytes per vector: vecsync memory ${fmt(stats.memoryBytes / N, 0)} (mirror: f32 unit vectors, metadata, pks, texts ${fmt((stats.memoryBytes - stats.indexBytes) / N, 0)}, HNSW ~${fmt(stats.indexBytes / N, 0)}), libSQL ${fmt(stats.sqlBytes / N, 0)}, index file ${fmt(indexFileBytes / N, 0)}; raw usearch ${params.scalar} file ${fmt(rawBytes, 0)}`);
if (pgBuild) console.log(pgBuild);
console.log(`pgvector baseline: ${pgNote}`);
console.log(`Machine load (1/5/15-min averages): at start ${loadAtStart}; at the end ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
console.log(`vecsync index: ${JSON.stringify(params)}${exactCapScale ? `, exact cap scale ${exactCapScale}` : ""}`);
if (pgClose) {
  progress("pgvector: dropping the throwaway database");
  await pgClose();
}
