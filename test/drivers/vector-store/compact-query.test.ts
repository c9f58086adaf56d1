// A compact mirror's index holds the rows' i8 codes, and its searches ask it with the query's
// codes too (search.ts hnswCandidates). Asked with the f32 query, usearch's own cast leaves a
// 768-dimension unit vector's components within about ±5: near neighbours then tie in the index
// and a search at its breadth can miss the query's own row, which a check by the row's codes
// had found (so it is no stray, scored apart). Rows here lie close together in tight clusters:
// asked with the f32 query, hundreds of these 3,000 rows were not found first by their own vector.
import { expect, test } from "bun:test";
import type { UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { makeWorld } from "./helpers.ts";

const DIMS = 768;
const ROWS = 3_000; // past the planner's exact-unfiltered bound: searches go through HNSW
const SPEC = { dimensions: DIMS, numericPk: true, metadata: [] };

/** ROWS vectors in 10 clusters, each row its centre moved by a small random step. */
function tightRows(): UpsertRow[] {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * 2 - 1;
  const centres = Array.from({ length: 10 }, () => Float32Array.from({ length: DIMS }, rand));
  return Array.from({ length: ROWS }, (_, i) => {
    const v = Float32Array.from(centres[i % centres.length]!, (x) => x + 0.005 * rand());
    return { pk: String(i), textHash: "t", metaHash: "m", text: `row ${i}`, metadata: {}, vector: v };
  });
}

test("compact: every row of tight clusters is found first by its own vector through HNSW", async () => {
  await using w = await makeWorld();
  const store = await w.open({ floatMirrorBytes: 0, index: { threads: 1 } });
  await store.createCollection("vt_q", SPEC);
  const rows = tightRows();
  for (let i = 0; i < ROWS; i += 500) await store.upsert("vt_q", rows.slice(i, i + 500));
  await store.whenReady("vt_q");
  const missed: string[] = [];
  for (const row of rows) {
    const { hits, path } = await store.search("vt_q", { vector: row.vector, k: 1 });
    expect(path).toBe("hnsw");
    if (hits[0]?.pk !== row.pk) missed.push(row.pk);
  }
  expect(missed).toEqual([]);
}, 60_000);
