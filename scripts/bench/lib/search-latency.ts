// The latency part of `bun run bench search`: the managed store's own search time per query mode,
// in process, as `bench query` measures it (no HTTP, no query embedding: every query's vector is
// embedded before the clock starts, so "embedding time apart" holds by construction).
//
// The rows are the search set's generator at N rows (default 100,000: 64 kinds × 1,563 variants),
// embedded with local-lexical-v1 at 512 dimensions (what `bench http` uses: ~100k texts/s, so the
// rows are ready in seconds), upserted into a store opened with the service's defaults, then each
// mode runs the set's 384 queries after the usual warm-up (measure.ts). Keyword cost grows with the
// rows holding a query's words: a paraphrase's filler words ("a", "for") are in many rows, a code's
// in a few, so the figures are given per query kind as well.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../../src/db/client.ts";
import { createEmbeddingProvider } from "../../../src/drivers/embeddings/index.ts";
import { VectorStore } from "../../../src/drivers/vector-store/index.ts";
import type { QueryMode, UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { fmt, percentile, progress, type Sample, table } from "./measure.ts";
import { QUERY_KINDS, type QueryKind, searchSet } from "./search-set.ts";

const MODEL = "local-lexical-v1";
const DIMS = 512;
const BATCH = 1000;
const WARMUP_RUNS = 1000;
const WARMUP_MS = 2000;
type Mode = QueryMode | "none";
const MODES: Mode[] = ["none", "vector", "keyword", "hybrid"];

function sample(times: number[]): Sample {
  const sorted = [...times].sort((a, b) => a - b);
  const total = sorted.reduce((a, b) => a + b, 0);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), qps: (sorted.length / total) * 1000, recall: NaN };
}

export type LatencyResult = { rows: number; byMode: Map<Mode, Sample>; byKind: Map<string, Sample>; buildSeconds: number };

export async function searchLatency(rowCount: number): Promise<LatencyResult> {
  const set = searchSet(rowCount);
  const dir = mkdtempSync(join(tmpdir(), "vecsync-bench-search-"));
  const { client } = await openDatabase(`file:${join(dir, "vecsync.db")}`);
  const store = await VectorStore.open({ client, indexDir: join(dir, "indexes") });
  const local = createEmbeddingProvider({ provider: "local" });
  try {
    await store.createCollection("search", { dimensions: DIMS, numericPk: true, metadata: [{ name: "brand", type: "keyword" }, { name: "colour", type: "keyword" }] });
    const t0 = performance.now();
    for (let from = 0; from < set.rows.length; from += BATCH) {
      const part = set.rows.slice(from, from + BATCH);
      const vectors = await local.embed(part.map((r) => r.text), { model: MODEL, dimensions: DIMS, kind: "document" });
      const rows: UpsertRow[] = part.map((r, i) => ({ pk: String(r.id), textHash: String(r.id), metaHash: "m", text: r.text, metadata: { brand: r.brand, colour: r.colour }, vector: vectors[i]! }));
      await store.upsert("search", rows);
      // Let libSQL finalize its statements between writes, as a service's event loop does (query.ts).
      await new Promise((resolve) => setImmediate(resolve));
      if ((from + BATCH) % 20_000 === 0) progress(`latency: upserted ${from + BATCH} rows`);
    }
    await store.whenReady("search");
    // The keyword ranking in memory is made on the first search by words; here before the clock.
    await store.keywordReady("search");
    const buildSeconds = (performance.now() - t0) / 1000;
    progress(`latency: ${set.rows.length} rows embedded and stored in ${buildSeconds.toFixed(1)} s`);
    const queries = set.queries;
    const vectors = await local.embed(queries.map((q) => q.text), { model: MODEL, dimensions: DIMS, kind: "query" });
    // Absent `mode`: the cosine search as it always was, without the keyword scores `vector` adds.
    const search = (mode: Mode, i: number) => store.search("search", { vector: vectors[i]!, text: queries[i]!.text, k: 10, mode: mode === "none" ? undefined : mode });
    const byMode = new Map<Mode, Sample>();
    const byKind = new Map<string, Sample>();
    for (const mode of MODES) {
      // measure.ts's warm-up rule, then each query once, its time kept by query kind.
      const until = performance.now() + WARMUP_MS;
      for (let i = 0; i < WARMUP_RUNS && performance.now() < until; i++) await search(mode, i % queries.length);
      const times = new Map<string, number[]>(QUERY_KINDS.map((k) => [k, []]));
      for (let i = 0; i < queries.length; i++) {
        const t0 = performance.now();
        await search(mode, i);
        times.get(queries[i]!.kind)!.push(performance.now() - t0);
      }
      byMode.set(mode, sample([...times.values()].flat()));
      for (const [kind, list] of times) byKind.set(`${mode} ${kind}`, sample(list));
      progress(`latency: ${mode} p50 ${fmt(byMode.get(mode)!.p50, 3)} ms`);
    }
    return { rows: set.rows.length, byMode, byKind, buildSeconds };
  } finally {
    await store.close();
    client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printLatency(r: LatencyResult): { keywordP50: number; ratio: number } {
  const kinds = (mode: Mode) => QUERY_KINDS.map((k: QueryKind) => fmt(r.byKind.get(`${mode} ${k}`)!.p50, 3));
  console.log(`\n### Latency: ${r.rows.toLocaleString("en")} rows × ${DIMS} (${MODEL}), the store in process, hybrid at its default weight, limit 10 (ms)\n`);
  console.log(table(
    ["mode", "p50", "p99", "QPS (one at a time)", ...QUERY_KINDS.map((k) => `p50 ${k}`)],
    MODES.map((m) => [m === "none" ? "no mode (cosine only)" : m, fmt(r.byMode.get(m)!.p50, 3), fmt(r.byMode.get(m)!.p99, 3), Math.round(r.byMode.get(m)!.qps), ...kinds(m)]),
  ));
  const keywordP50 = r.byMode.get("keyword")!.p50;
  const ratio = r.byMode.get("hybrid")!.p50 / r.byMode.get("vector")!.p50;
  const plain = r.byMode.get("hybrid")!.p50 / r.byMode.get("none")!.p50;
  console.log(`\nhybrid p50 / vector p50 = ${fmt(ratio)} (target ≤ 1.5; against the search without a mode ${fmt(plain)}); keyword p50 ${fmt(keywordP50, 3)} ms (target ≤ 1 ms)`);
  return { keywordP50, ratio };
}
