// Exact top-k over a list of rids (ascending is fastest): gather their f32 vectors from the
// mirror (GATHER_ROWS at a time, one slab at a time) and let usearch's exactSearch score them (SIMD, ~8 GB/s on one thread). Results keep the
// whole group of rows tied with the last one kept, so ties can then be broken by primary key.
// For the HNSW path's few dozen candidates, `rescore` computes the f32 cosine in JS straight
// from the mirror instead: no copy and no native call (~10 µs for 30 × 384 against ~30 µs).
// A compact mirror (mirror.ts) has codes only: every function here then scores by the codes'
// cosine, and search.ts makes the final candidates' scores exact from libSQL (refine.ts).
import { exactSearch, type Matches, MetricKind } from "usearch";
import { type ColumnOrder, codesFrom, type Run } from "./column-order.ts";
import { GATHER_ROWS, type Mirror } from "./mirror.ts";
import { quantizeQuery } from "./quantize.ts";

export interface Candidate {
  rid: number;
  distance: number;
}

/** Keeps the `want` nearest plus every candidate tied with the last kept. Sorts in place. */
export function cutWithTies(list: Candidate[], want: number): Candidate[] {
  list.sort((a, b) => a.distance - b.distance);
  if (list.length <= want) return list;
  const edge = list[want - 1]!.distance;
  let end = want;
  while (end < list.length && list[end]!.distance === edge) end++;
  return list.slice(0, end);
}

/**
 * The `want` nearest of `rids` (and every row tied with the last), scored by usearch's
 * exactSearch one gathered chunk at a time. `query` must own its buffer.
 */
function nearestInChunks(rids: ArrayLike<number>, want: number, dims: number, gather: (from: number) => Float32Array | Int8Array, query: Float32Array | Int8Array, metric: MetricKind): Candidate[] {
  const all: Candidate[] = [];
  for (let from = 0; from < rids.length; ) {
    const data = gather(from);
    const count = data.length / dims;
    // One more than wanted shows whether the tie group at the cut continues past it.
    let matches = exactSearch(data, query, dims, Math.min(count, want + 1), metric, 1) as Matches;
    const d = matches.distances;
    if (d.length > want && d[want] === d[want - 1]) matches = exactSearch(data, query, dims, count, metric, 1) as Matches;
    for (let i = 0; i < matches.keys.length; i++) all.push({ rid: rids[from + Number(matches.keys[i]!)]!, distance: matches.distances[i]! });
    from += count;
  }
  return cutWithTies(all, want);
}

/**
 * `query` must be a unit vector that owns its buffer (usearch ignores typed-array offsets).
 * Scored by inner product over the mirror's unit vectors: distance 1 − cos, at twice the cosine kernel's speed.
 */
export function exactTopK(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>, want: number): Candidate[] {
  if (want <= 0) return [];
  if (!mirror.hasFloats) return codesTopK(mirror, query, rids, want);
  return nearestInChunks(rids, want, mirror.dims, (from) => mirror.gather(rids, from, GATHER_ROWS), query, MetricKind.IP);
}

/** Above this many rows the exact path scans i8 codes (scanTopK): as exact on every run measured, up to 2.3× faster. */
export const SCAN_MIN_ROWS = 512;

/** Rows the i8 scan hands to the f32 re-score: i8 cosines order near-ties loosely, never by more. */
export function scanRescoreRows(k: number): number {
  return Math.max(4 * k, 40);
}

/**
 * Top-k over many rids at a quarter of the memory traffic: the i8 codes are scanned (usearch's
 * exactSearch, cosine), the best `scanRescoreRows(k)` re-scored in f32, cut with ties. On the
 * benchmark data it agrees with `exactTopK` (recall@10 1.0 at 5,000 and 50,000 rows).
 */
export function scanTopK(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>, k: number): Candidate[] {
  if (!mirror.hasFloats) return codesTopK(mirror, query, rids, k);
  // Identical vectors have identical codes: a tie at the i8 cut is kept whole, as in exactTopK.
  const best = codesTopK(mirror, query, rids, scanRescoreRows(k));
  return cutWithTies(rescore(mirror, query, best.map((c) => c.rid)), k);
}

/**
 * `scanTopK` over rows whose codes already lie in order in buffers of their own (a column
 * order's runs): `codes(from)` hands over those of rids[from] and the rows after it, as
 * many as one buffer holds. One native scan per buffer and no gather.
 */
export function runTopK(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>, codes: (from: number) => Int8Array, k: number): Candidate[] {
  if (rids.length === 0 || k <= 0) return [];
  const want = mirror.hasFloats ? scanRescoreRows(k) : k;
  const best = nearestInChunks(rids, want, mirror.dims, codes, quantizeQuery(query), MetricKind.Cos);
  return mirror.hasFloats ? cutWithTies(rescore(mirror, query, best.map((c) => c.rid)), k) : best;
}

/**
 * The exact top-k of a column order's runs (column-order.ts): each buffer of codes scanned where it
 * lies, a few rows scored in f32 outright (as nearestOf does).
 */
export function orderTopK(mirror: Mirror, query: Float32Array, order: ColumnOrder, runs: Run[], k: number): Candidate[] {
  const rids = runs.length === 1 ? order.rids.subarray(runs[0]!.from, runs[0]!.to) : concatRuns(order.rids, runs);
  if (rids.length <= SCAN_MIN_ROWS) return exactTopK(mirror, query, rids, k);
  // Where each run starts among `rids`: codes(at) hands over the run holding `at`, up to its end.
  const starts: number[] = [];
  let at = 0;
  for (const run of runs) {
    starts.push(at);
    at += run.to - run.from;
  }
  // runTopK asks for ascending `from`: the run holding it only moves forward.
  let r = 0;
  return runTopK(mirror, query, rids, (from) => {
    while (r + 1 < runs.length && starts[r + 1]! <= from) r++;
    const run = runs[r]!;
    return codesFrom(order, mirror.dims, run.from + from - starts[r]!, run.to);
  }, k);
}

function concatRuns(rids: Uint32Array, runs: Run[]): Uint32Array {
  const out = new Uint32Array(runs.reduce((n, run) => n + run.to - run.from, 0));
  let at = 0;
  for (const run of runs) {
    out.set(rids.subarray(run.from, run.to), at);
    at += run.to - run.from;
  }
  return out;
}

/** The `want` nearest of `rids` (ascending is fastest) by the i8 codes' cosine (and the rows tied with the last). */
export function codesTopK(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>, want: number): Candidate[] {
  return nearestInChunks(rids, want, mirror.dims, (from) => mirror.gatherCodes(rids, from, GATHER_ROWS), quantizeQuery(query), MetricKind.Cos);
}

/**
 * Exact cosine distances (f64 accumulation over the f32 vectors) of a few rids, read in place
 * from the mirror. The HNSW index holds i8 codes: these are the scores we return.
 */
export function rescore(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>): Candidate[] {
  const dims = mirror.dims;
  if (!mirror.hasFloats) return rescoreCodes(mirror, query, rids);
  let qq = 0;
  for (let j = 0; j < dims; j++) qq += query[j]! * query[j]!;
  const out: Candidate[] = new Array(rids.length);
  for (let i = 0; i < rids.length; i++) {
    const rid = rids[i]!;
    const data = mirror.slabOf(rid);
    const base = mirror.offsetOf(rid);
    let dot = 0;
    let vv = 0;
    for (let j = 0; j < dims; j++) {
      const x = data[base + j]!;
      dot += x * query[j]!;
      vv += x * x;
    }
    out[i] = { rid, distance: 1 - dot / Math.sqrt(qq * vv) };
  }
  return out;
}

/** `rescore` on a compact mirror: the cosine of the f32 query with each row's i8 codes (gathered: they may live in the index, lent-codes.ts). */
function rescoreCodes(mirror: Mirror, query: Float32Array, rids: ArrayLike<number>): Candidate[] {
  const dims = mirror.dims;
  let qq = 0;
  for (let j = 0; j < dims; j++) qq += query[j]! * query[j]!;
  const out: Candidate[] = new Array(rids.length);
  for (let i = 0; i < rids.length; ) {
    const codes = mirror.gatherCodes(rids, i, GATHER_ROWS);
    const n = codes.length / dims;
    for (let row = 0; row < n; row++, i++) {
      const base = row * dims;
      let dot = 0;
      let vv = 0;
      for (let j = 0; j < dims; j++) {
        const x = codes[base + j]!;
        dot += x * query[j]!;
        vv += x * x;
      }
      out[i] = { rid: rids[i]!, distance: vv === 0 ? 1 : 1 - dot / Math.sqrt(qq * vv) };
    }
  }
  return out;
}
