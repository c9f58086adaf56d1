// Routing between the exact path and the HNSW path, from a cost model calibrated with
// `bun run bench query` and forced-path runs (CALIBRATION below).
//   exact over m matching rows  ≈ m × (EXACT_SQL_US + EXACT_VECTOR_US × dims/384)
//       (rids read through the metadata index, then gather + SIMD inner product of unit vectors)
//   HNSW search for kq results  ≈ (HNSW_FIXED_US + HNSW_PER_RESULT_US × kq) × dims/384
// A filter of selectivity p = m/N needs kq ≈ OVERSAMPLE × k / p candidates, so the two cross at
// the m* solving  m·a = b + c·O·k·N/m  (exactCap). Route by the estimated match count, not by
// percent: m* grows with √N.
import type { Predicate } from "./filters/index.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";

/**
 * CALIBRATION — 100k × 384 clustered, f16, M=16, ef=64, k=10, one search thread, 2 cores shared
 * with other work (load average 3–4, so absolute times are ~2× an idle machine's; the crossover
 * is a ratio and held across runs). store.search p50, each path forced:
 *   matches   exact    HNSW (kq = 1.6·k/p)
 *     500     0.33 ms  38 ms   (kq 3,200: HNSW cost grows faster than linearly past ef)
 *   1,000     0.73     12
 *   2,000     1.4–2.0  3.6
 *   3,000     2.4–3.3  2.8
 *   4,000     2.9–4.3  1.4–1.6
 *   5,000     4.1–4.8  1.04
 *   8,000     6.6      0.6
 * → crossover ≈ 3,000–3,500 matching rows (the anchors: 2,000–4,000). The constants
 * below are idle-machine figures with that crossover: m* = 3,390 at 100k × 384, ≈ 9,700 at
 * 1M × 384, ≈ 10,800 at 1M × 768 (the model scales both paths with dims, so m* barely moves;
 * the issue saw it halve at 768 dims — unconfirmed here).
 * `--large` (1M × 768, load ~3, ef=64): exact over 500 matches 0.57 ms, over 5,000 5.8 ms
 * (~1.1 µs/row: gathers from a 3 GB mirror miss the caches); HNSW kq=30 1.35 ms, kq=320 2.2 ms.
 * At 5,000 matches HNSW would need kq=3,200 (≈ 36 ms at 100k already), so exact is still right.
 */
const EXACT_SQL_US = 0.09;
const EXACT_VECTOR_US = 0.15;
const HNSW_FIXED_US = 200;
const HNSW_PER_RESULT_US = 1.3;

/** Margin over k/p: with 1.6 × k/p candidates fewer than k pass only ~5 % of the time (binomial), so one pass usually does. */
const OVERSAMPLE = 1.6;
/** An exact attempt reads at most this many times m* rids before giving up for HNSW (estimate noise). */
const EXACT_SLACK = 1.5;
/** A first, cheap sample (~4 µs): enough when the filter is far from m* either way. */
const QUICK_SAMPLE_ROWS = 256;
/** Near m* (within ×4) a closer look (~15 µs): ±18 % at m* on 100k rows. */
const SAMPLE_ROWS = 1024;
const NEAR_CAP = 4;

/** Unfiltered searches over at most this many rows are exact (one gather chunk, ~0.3 ms). */
export const EXACT_UNFILTERED_ROWS = 2048;

/** Kept for callers of the old model: one HNSW result costs about this many exactly scanned rows. */
export const HNSW_UNIT_IN_EXACT_ROWS = Math.round(HNSW_PER_RESULT_US / (EXACT_SQL_US + EXACT_VECTOR_US));

/** HNSW candidates to re-score for an unfiltered top-k: f32 re-scoring fixes the f16 index's near-ties. */
export function rerankWant(k: number): number {
  return 2 * k + 10;
}

/** Rows that must pass a filter among the HNSW candidates. */
export function filteredWant(k: number): number {
  return k;
}

/**
 * The match count under which the exact path wins (m* above), for `dims` dimensions;
 * `scale` lets tests move it.
 */
export function exactCap(k: number, liveRows: number, scale = 1, dims = 384): number {
  const d = dims / 384;
  const a = EXACT_SQL_US + EXACT_VECTOR_US * d;
  const b = HNSW_FIXED_US * d;
  const c = HNSW_PER_RESULT_US * d * OVERSAMPLE * filteredWant(k) * liveRows;
  const m = (b + Math.sqrt(b * b + 4 * a * c)) / (2 * a);
  return Math.max(1, Math.round(scale * m));
}

/** Fraction of live rows matching `pred`: a quick stride sample, a closer one when near `cap`. */
export function estimateSelectivity(pred: Predicate<number>, mirror: Mirror, cap = 0): number {
  const quick = sampleSelectivity(pred, mirror, QUICK_SAMPLE_ROWS);
  const matches = quick * mirror.liveCount;
  return matches > cap / NEAR_CAP && matches < cap * NEAR_CAP ? sampleSelectivity(pred, mirror, SAMPLE_ROWS) : quick;
}

/** Fraction of live rows matching `pred` among about `rows` rows at a fixed stride. */
function sampleSelectivity(pred: Predicate<number>, mirror: Mirror, rows: number): number {
  const step = Math.max(1, Math.floor(mirror.ridEnd / rows));
  let seen = 0;
  let hits = 0;
  for (let rid = step >> 1; rid < mirror.ridEnd && seen < rows * 2; rid += step) {
    if (!mirror.isLive(rid)) continue;
    seen++;
    if (pred(rid)) hits++;
  }
  return seen === 0 ? 1 : hits / seen;
}

export type FilteredRoute = { path: "exact"; limit: number } | { path: "hnsw"; selectivity: number };

/**
 * Exact when the estimated match count is under m* (reading at most EXACT_SLACK × m* rids, so a
 * low estimate costs one bounded SQL read before HNSW); HNSW with the estimate otherwise, with no
 * SQL at all: the sample is precise enough there (≥ ~25 sampled hits).
 */
export function routeFiltered(selectivity: number, liveRows: number, cap: number): FilteredRoute {
  if (selectivity * liveRows <= cap) return { path: "exact", limit: Math.ceil(cap * EXACT_SLACK) };
  return { path: "hnsw", selectivity };
}

export interface HnswOutcome {
  /** Live rids passing the filter, nearest first by the index's (approximate) distance. */
  rids: number[];
  /** False when the index could not find enough: the caller falls back to the exact path. */
  complete: boolean;
}

/**
 * HNSW search with oversampling and exact post-filtering, widening ×2 (three times at most)
 * until `want` rows pass, the index is exhausted, or what remains is below `minScore`.
 */
export function hnswCandidates(
  index: HnswIndex,
  mirror: Mirror,
  query: Float32Array,
  want: number,
  pred: Predicate<number> | null,
  selectivity: number,
  minScore: number | null,
): HnswOutcome {
  let kq = Math.ceil((want / Math.max(selectivity, 1e-6)) * (pred ? OVERSAMPLE : 1));
  const maxKq = kq * 8;
  for (;;) {
    kq = Math.min(kq, index.size);
    const found = index.search(query, kq);
    const rids = found.rids.filter((rid) => mirror.isLive(rid) && (!pred || pred(rid)));
    if (rids.length >= want || found.rids.length < kq || kq >= index.size) return { rids, complete: true };
    const farthest = found.distances[found.distances.length - 1];
    // f16/i8 distances are approximate: keep a margin before concluding nothing further can qualify
    if (minScore !== null && farthest !== undefined && 1 - farthest < minScore - 0.02) return { rids, complete: true };
    if (kq >= maxKq) return { rids, complete: false };
    kq *= 2;
  }
}
