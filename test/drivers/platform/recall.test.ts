// Recall@10 of pgvector platform searches against the exact top-10, at every filter selectivity
// from 100 % down to 0.1 %, on clustered data (the benchmark's generator). The exact path's
// threshold is lowered (200 estimated rows instead of 5,000) so that a 20,000-row table walks
// every regime: HNSW with the base ef_search, HNSW with ef_search widened by the filter's
// selectivity, and the exact scan where even 1,000 candidates would not hold the filtered top-10.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { groundTruth, makeDataset, recallAt, type Dataset } from "../../../scripts/bench/lib/data.ts";
import { platformWorld, type PlatformWorld } from "./world.ts";

setDefaultTimeout(60_000);

const N = 20_000;
const DIMS = 96;
const QUERIES = 40;
const SELECTIVITIES = [100, 50, 20, 10, 5, 3, 2, 1, 0.5, 0.1];
const ref = platformVectorRef("recall01xxxx", "recall");
let world: PlatformWorld;
let data: Dataset;

beforeAll(async () => {
  world = await platformWorld({ exactMaxRows: 200 });
  data = makeDataset(N, DIMS, QUERIES, 7);
  const spec = { dimensions: DIMS, numericPk: true, metadata: [{ name: "price", type: "float" as const }], primaryKey: { name: "id", type: "integer" } };
  await world.store.ensureTable(ref, spec);
  for (let start = 0; start < N; start += 2000) {
    const rows = [];
    for (let i = start; i < start + 2000; i++) rows.push({ pk: String(i), textHash: "t", metaHash: "m", text: `doc ${i}`, metadata: { price: data.price[i]! }, vector: data.vectors.subarray(i * DIMS, (i + 1) * DIMS) });
    await world.store.upsert(ref, rows);
  }
  await world.store.buildIndex(ref);
  await world.db.sql.unsafe(`ANALYZE vecsync."vt_recall01_recall"`);
});
afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

test("recall@10 ≥ 0.99 at every selectivity, over HNSW, widened HNSW and exact paths", async () => {
  const report: string[] = [];
  const paths = new Set<string>();
  for (const s of SELECTIVITIES) {
    const truth = groundTruth(data, s, 10, 2);
    let recall = 0;
    const seen = new Map<string, number>();
    for (let i = 0; i < QUERIES; i++) {
      const { hits, path } = await world.store.search(ref, { vector: data.queries[i]!, k: 10, filter: s >= 100 ? undefined : { price: { lt: s } } });
      for (const h of hits) expect(data.price[Number(h.pk)]! < s || s >= 100).toBe(true);
      recall += recallAt(hits.map((h) => Number(h.pk)), truth[i]!);
      seen.set(path, (seen.get(path) ?? 0) + 1);
      paths.add(path);
    }
    report.push(`${s}%: ${(recall / QUERIES).toFixed(3)} (${[...seen].map(([p, c]) => `${p}:${c}`).join(" ")})`);
    expect(recall / QUERIES, report.join("; ")).toBeGreaterThanOrEqual(0.99);
  }
  console.log(`recall@10 by selectivity: ${report.join("; ")}`);
  expect([...paths].sort()).toEqual(["exact", "index"]);
});
