// Synthetic clustered embeddings for `bun run bench query`: unit vectors around random centres
// (like real text embeddings, which crowd into topics), a uniform `price` in [0, 100) so that
// `price < s` selects s % of the rows, and exact ground truth by brute force. Two ways to get
// them: `makeDataset` holds every row (tests and runs that fit in memory), `streamDataset`
// regenerates the rows a chunk at a time (10M × 384 is 15 GB of f32), the same on every pass.
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
function samplePoint(out: Float32Array, offset: number, centres: Float32Array, clusters: number, dims: number, spread: number, rand: () => number, normal = () => gaussian(rand)): void {
  const c = Math.floor(rand() * clusters) * dims;
  let norm = 0;
  for (let j = 0; j < dims; j++) {
    const v = centres[c + j]! + normal() * spread;
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

/**
 * A keyword column derived from price: 20 categories of 5 % each, `c0` holding exactly the rows
 * with price < 5, so a `category = c0` filter has the `price < 5` filter's ground truth.
 */
export function categoryOf(price: number): string {
  return `c${Math.floor(price / 5)}`;
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

// ---- streamed datasets --------------------------------------------------------------------

/** Rows per generated chunk. Fixed: each chunk's numbers come from its own stream (`chunkRandom`). */
export const CHUNK_ROWS = 10_000;

export interface Chunk {
  start: number; // id of the first row
  vectors: Float32Array; // rows × dims, row-major
}

/** The rows in id order a chunk at a time, and what is small enough to keep: prices, queries. */
export interface DataSource {
  n: number;
  dims: number;
  price: Float64Array; // 8 B a row: 80 MB at 10M, kept for the filters' ground truth
  queries: Float32Array[];
  chunks(): Generator<Chunk>;
}

/** An in-memory dataset read as chunks: copies, since usearch's binding ignores a subarray's offset. */
export function chunksOf(data: Dataset): DataSource {
  return {
    ...data,
    *chunks() {
      for (let start = 0; start < data.n; start += CHUNK_ROWS) {
        yield { start, vectors: data.vectors.slice(start * data.dims, Math.min(data.n, start + CHUNK_ROWS) * data.dims) };
      }
    },
  };
}

/**
 * sfc32, a 128-bit-state generator: mulberry32's period (2^32 draws) is shorter than the
 * 10M × 384 dataset's ~4·10^9 normals, whose rows would then repeat shifted windows of the same
 * numbers. Seeded from (seed, stream, index) and run past its first draws, as usual for sfc32.
 */
function chunkRandom(seed: number, stream: number, index: number): () => number {
  let a = seed | 0, b = stream | 0, c = index | 0, d = 1;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/** Standard normals by Box–Muller, both of each pair used (the generator's main cost at 10M rows). */
function normals(rand: () => number): () => number {
  let spare = NaN;
  return () => {
    if (!Number.isNaN(spare)) {
      const v = spare;
      spare = NaN;
      return v;
    }
    const r = Math.sqrt(-2 * Math.log(rand() || 1e-12));
    const a = 2 * Math.PI * rand();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
}

const STREAM = { centres: 1, prices: 2, queries: 3, rows: 4 };

/**
 * The distribution of `makeDataset` (not its numbers), with rows made on demand: chunk c always
 * comes from stream (seed, rows, c), so every pass over `chunks()` yields the same rows.
 */
export function streamDataset(n: number, dims: number, queryCount: number, seed = 42, clusters = Math.max(16, Math.round(Math.sqrt(n)))): DataSource {
  const centreNormal = normals(chunkRandom(seed, STREAM.centres, 0));
  const centres = Float32Array.from({ length: clusters * dims }, () => centreNormal() / Math.sqrt(dims));
  const spread = 0.8 / Math.sqrt(dims);
  const priceRand = chunkRandom(seed, STREAM.prices, 0);
  const price = Float64Array.from({ length: n }, () => Math.floor(priceRand() * 1_000_000) / 10_000);
  const queryRand = chunkRandom(seed, STREAM.queries, 0);
  const queryNormal = normals(queryRand);
  const queries = Array.from({ length: queryCount }, () => {
    const q = new Float32Array(dims);
    samplePoint(q, 0, centres, clusters, dims, spread, queryRand, queryNormal);
    return q;
  });
  return {
    n,
    dims,
    price,
    queries,
    *chunks() {
      for (let start = 0; start < n; start += CHUNK_ROWS) {
        const rand = chunkRandom(seed, STREAM.rows, start / CHUNK_ROWS);
        const normal = normals(rand);
        const rows = Math.min(CHUNK_ROWS, n - start);
        const vectors = new Float32Array(rows * dims);
        for (let i = 0; i < rows; i++) samplePoint(vectors, i * dims, centres, clusters, dims, spread, rand, normal);
        yield { start, vectors };
      }
    },
  };
}

/** Every row in one array: for consumers that need it whole (pgvector's loader), when it fits. */
export function collect(source: DataSource): Dataset {
  const vectors = new Float32Array(source.n * source.dims);
  for (const { start, vectors: v } of source.chunks()) vectors.set(v, start * source.dims);
  return { n: source.n, dims: source.dims, vectors, price: source.price, queries: source.queries };
}

/**
 * `groundTruth` for every limit in one pass over the chunks: per chunk and limit, the exact
 * top-k among its rows with price < limit, merged into each query's running top-k.
 */
export function streamedGroundTruth(source: DataSource, limits: number[], k: number, threads: number, onChunk?: (rowsDone: number) => void): Map<number, number[][]> {
  const { dims, queries } = source;
  const flat = new Float32Array(queries.length * dims);
  queries.forEach((q, i) => flat.set(q, i * dims));
  const best = new Map(limits.map((l) => [l, queries.map(() => [] as { id: number; d: number }[])]));
  for (const { start, vectors } of source.chunks()) {
    const rows = vectors.length / dims;
    for (const limit of limits) {
      let ids: number[] = [];
      let subset = vectors;
      if (limit >= 100) ids = Array.from({ length: rows }, (_, i) => start + i);
      else {
        for (let i = 0; i < rows; i++) if (source.price[start + i]! < limit) ids.push(start + i);
        subset = new Float32Array(ids.length * dims);
        ids.forEach((id, i) => subset.set(vectors.subarray((id - start) * dims, (id - start + 1) * dims), i * dims));
      }
      if (ids.length === 0) continue;
      const found = exactSearch(subset, flat, dims, Math.min(k, ids.length), MetricKind.Cos, threads) as BatchMatches | Matches;
      best.get(limit)!.forEach((top, qi) => {
        const m = "counts" in found ? found.get(qi) : found;
        m.keys.forEach((key, j) => offer(top, ids[Number(key)]!, m.distances[j]!, k));
      });
    }
    onChunk?.(start + rows);
  }
  return new Map([...best].map(([l, tops]) => [l, tops.map((top) => top.map((t) => t.id))]));
}

/** Keeps `top` the k nearest seen, ordered by distance then id (ties fall the same way every run). */
function offer(top: { id: number; d: number }[], id: number, d: number, k: number): void {
  let at = top.length;
  while (at > 0 && (top[at - 1]!.d > d || (top[at - 1]!.d === d && top[at - 1]!.id > id))) at--;
  if (at >= k) return;
  top.splice(at, 0, { id, d });
  if (top.length > k) top.pop();
}
