// Synthetic clustered embeddings for `bun run bench query`: unit vectors around random centres
// (like real text embeddings, which crowd into topics), a uniform `price` in [0, 100) so that
// `price < s` selects s % of the rows, and exact ground truth by brute force.
import { mulberry32 } from "../../../src/shared/prng.ts";
import { exactSearch, type BatchMatches, type Matches, MetricKind } from "usearch";

export interface Dataset {
  n: number;
  dims: number;
  vectors: Float32Array; // n × dims, row-major
  price: Float64Array;
  queries: Float32Array[];
}

const rng = mulberry32;

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
}

/** Writes one point near a random centre, normalised, at `out[offset…]`. */
function samplePoint(out: Float32Array, offset: number, centres: Float32Array, clusters: number, dims: number, spread: number, rand: () => number): void {
  const c = Math.floor(rand() * clusters) * dims;
  let norm = 0;
  for (let j = 0; j < dims; j++) {
    const v = centres[c + j]! + gaussian(rand) * spread;
    out[offset + j] = v;
    norm += v * v;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let j = 0; j < dims; j++) out[offset + j]! *= inv;
}

/** `clusters` defaults to √n; more, smaller clusters make the far neighbours harder to order. */
export function makeDataset(n: number, dims: number, queryCount: number, seed = 42, clusters = Math.max(16, Math.round(Math.sqrt(n)))): Dataset {
  const rand = rng(seed);
  const centres = new Float32Array(clusters * dims);
  for (let i = 0; i < centres.length; i++) centres[i] = gaussian(rand) / Math.sqrt(dims);
  // Spread comparable to the centres' own scale: clusters overlap, as topics do.
  const spread = 0.8 / Math.sqrt(dims);
  const vectors = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) samplePoint(vectors, i * dims, centres, clusters, dims, spread, rand);
  const price = Float64Array.from({ length: n }, () => Math.floor(rand() * 1_000_000) / 10_000);
  const queries = Array.from({ length: queryCount }, () => {
    const q = new Float32Array(dims);
    samplePoint(q, 0, centres, clusters, dims, spread, rand);
    return q;
  });
  return { n, dims, vectors, price, queries };
}

/** Exact top-k ids per query among rows with price < limit (limit ≥ 100: all rows). */
export function groundTruth(data: Dataset, limit: number, k: number, threads: number): number[][] {
  const { dims } = data;
  const ids: number[] = [];
  for (let i = 0; i < data.n; i++) if (data.price[i]! < limit) ids.push(i);
  const subset = new Float32Array(ids.length * dims);
  ids.forEach((id, i) => subset.set(data.vectors.subarray(id * dims, (id + 1) * dims), i * dims));
  const flat = new Float32Array(data.queries.length * dims);
  data.queries.forEach((q, i) => flat.set(q, i * dims));
  const count = Math.min(k, ids.length);
  const found = exactSearch(subset, flat, dims, count, MetricKind.Cos, threads) as BatchMatches | Matches;
  return data.queries.map((_, qi) => {
    const m = "counts" in found ? found.get(qi) : found;
    return Array.from(m.keys, (key) => ids[Number(key)]!);
  });
}

export function recallAt(found: number[], truth: number[]): number {
  const set = new Set(truth);
  return found.filter((id) => set.has(id)).length / Math.max(1, truth.length);
}
