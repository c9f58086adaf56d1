// Routing between the exact path and the HNSW path, from a cost model calibrated with
// `bun run bench query` and forced-path runs (CALIBRATION below).
//   exact over m matching rows  ≈ m × (EXACT_SQL_US + EXACT_VECTOR_US × dims/384)
//       (rids read through the metadata index, then a gather + SIMD scan of i8 codes, f32 re-score)
//   HNSW search for kq results  ≈ (HNSW_FIXED_US + HNSW_PER_RESULT_US × kq) × dims/384
// A filter of selectivity p = m/N needs kq ≈ OVERSAMPLE × k / p candidates, so the two cross at
// the m* solving  m·a = b + c·O·k·N/m; HNSW's recall adds a floor linear in N (exactCap).
// Route by the estimated match count, not by percent. These defaults hold on the benchmark's data;
// calibration.ts measures each collection and deepens (or replaces) filtered HNSW where they don't.
import type { Predicate } from "./filters/index.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";

/**
 * CALIBRATION — 100k × 384 clustered, i8 index, M=16, ef=64, k=10, one search thread, load ~1;
 * `bun run bench query --selectivity 0.5,1,2,3,5,8 --cap-scale 1e9` (exact) and `1e-9` (HNSW):
 *   selectivity  matches  exact (i8 scan)  HNSW (kq = 1.6·k/p)       HNSW recall@10
 *     0.5 %        500     0.15 ms          6.0 ms (kq 3,200)         0.93
 *     1 %        1,000     0.26             5.7                       0.97
 *     2 %        2,000     0.41             0.90                      0.92
 *     3 %        3,000     0.57             0.52                      0.96
 *     5 %        5,000     0.90             0.26 (kq 320)             0.998
 *     8 %        8,000     1.39             0.19                      0.996
 * Cost alone crosses near 2,500 matches (the constants below); recall sets the real bound: past
 * ~400 candidates the i8 index orders the far tail too loosely (the true filtered top-10 sit
 * beyond unfiltered rank k/p), so HNSW is used only when kq ≤ HNSW_MAX_KQ, i.e. from 4 % at
 * k = 10 whatever the size. `--large` (1M × 768): the i8 scan of 5,000 rows 1.26 ms (f32: 2.96).
 */
const EXACT_SQL_US = 0.05;
const EXACT_VECTOR_US = 0.13;
const HNSW_FIXED_US = 70;
const HNSW_PER_RESULT_US = 0.6;
/** Most HNSW candidates a filtered search asks for (see CALIBRATION: recall, not cost). */
const HNSW_MAX_KQ = 400;

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

/**
 * How wide an HNSW search must be (usearch's ef is max(expansion_search, results asked for)).
 * Recall at a fixed ef falls as the graph grows: on the clustered benchmark data, i8, M=16,
 * recall@10 after the f32 re-score is 0.998 at ef 64 on 100k × 384 but 0.86 at ef 64 and
 * 0.992 at ef 384 on 1M × 768 (0.74 ms). ef grows as N^0.8 from the configured value at 100k rows.
 */
export function searchBreadth(liveRows: number, expansionSearch: number): number {
  const scaled = expansionSearch * Math.pow(Math.max(1, liveRows / 100_000), 0.8);
  return Math.min(MAX_BREADTH, Math.max(expansionSearch, Math.round(scaled)));
}
const MAX_BREADTH = 1024;

/**
 * A filtered search reaches past unfiltered rank k/p, where a large graph's order is loosest:
 * on 1M × 768 at 5 % recall@10 was 0.977 with kq = 1.6·k/p. The factor is 1 up to 100k rows.
 */
function deepening(breadth: number, index: HnswIndex): number {
  return Math.sqrt(breadth / index.params.expansionSearch);
}

/** Passing candidates a filtered search re-scores: a broad filter's passes crowd the top, so more of them. */
export function filteredRescore(k: number, breadth: number, depth = 1): number {
  return 4 * depth * rerankWant(k, breadth);
}

/**
 * HNSW candidates, in the index's order, to re-score in f32. The i8 index orders near-ties
 * loosely: at ef 64 its own top-10 holds 0.85 of the true top-10, its top-30 re-scored 0.998;
 * at ef 384 (1M × 768) the top-30 re-scored give 0.983, the top-60 0.992.
 */
export function rerankWant(k: number, breadth: number): number {
  return Math.max(2 * k + 10, Math.ceil(breadth / 6));
}

/** Rows that must pass a filter among the HNSW candidates. */
export function filteredWant(k: number): number {
  return k;
}

/** The cost model above, in µs: the exact path over `matches` rows. */
export function exactCostUs(matches: number, dims: number): number {
  return matches * (EXACT_SQL_US + EXACT_VECTOR_US * (dims / 384));
}

/**
 * The cost model above, in µs: one HNSW search for `kq` results, plus the quadratic term that
 * shows past ~300 results (usearch keeps its ef best in a sorted array; 100k × 384: 0.35 ms at
 * 320, 0.65 at 400, 1.0 at 500, 4.9 at 1,376). exactCap leaves it out: its recall bound routes
 * those searches exact anyway.
 */
export function hnswCostUs(kq: number, dims: number): number {
  return (HNSW_FIXED_US + HNSW_PER_RESULT_US * kq + HNSW_PER_RESULT2_US * kq * kq) * (dims / 384);
}
const HNSW_PER_RESULT2_US = 0.002;

/**
 * The match count under which the exact path is used: where it is cheaper (m* above) or where
 * HNSW would need more than HNSW_MAX_KQ candidates; `scale` lets tests move it.
 */
export function exactCap(k: number, liveRows: number, scale = 1, dims = 384): number {
  const d = dims / 384;
  const a = exactCostUs(1, dims);
  const b = HNSW_FIXED_US * d;
  const c = HNSW_PER_RESULT_US * d * OVERSAMPLE * filteredWant(k) * liveRows;
  const byCost = (b + Math.sqrt(b * b + 4 * a * c)) / (2 * a);
  const byRecall = (OVERSAMPLE * filteredWant(k) * liveRows) / HNSW_MAX_KQ;
  return Math.max(1, Math.round(scale * Math.max(byCost, byRecall)));
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

/** The candidates a first HNSW pass asks for; `depth` (calibration.ts) multiplies the whole search. */
export function firstPassKq(want: number, selectivity: number, filtered: boolean, breadth: number, index: HnswIndex, depth = 1): number {
  const perPass = (want / Math.max(selectivity, 1e-6)) * (filtered ? OVERSAMPLE * deepening(breadth, index) : 1);
  return Math.ceil(depth * Math.max(breadth, perPass));
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
  breadth: number,
  depth = 1,
): HnswOutcome {
  let kq = firstPassKq(want, selectivity, pred !== null, breadth, index, depth);
  const maxKq = kq * 8;
  for (;;) {
    kq = Math.min(kq, index.size);
    const found = index.search(query, kq, (rid, version) => mirror.isCurrent(rid, version));
    const rids = pred ? found.rids.filter((rid) => pred(rid)) : found.rids;
    if (rids.length >= want || found.exhausted || kq >= index.size) return { rids, complete: true };
    const farthest = found.distances[found.distances.length - 1];
    // f16/i8 distances are approximate: keep a margin before concluding nothing further can qualify
    if (minScore !== null && farthest !== undefined && 1 - farthest < minScore - 0.02) return { rids, complete: true };
    if (kq >= maxKq) return { rids, complete: false };
    kq *= 2;
  }
}

/** Candidates plus the index's strays that are current and pass the filter (hnsw.ts `strays`). */
export function withStrays(index: HnswIndex, mirror: Mirror, rids: number[], pred: Predicate<number> | null): number[] {
  if (index.strays.size === 0) return rids;
  const seen = new Set(rids);
  const out = rids.slice();
  for (const rid of index.strays) if (!seen.has(rid) && mirror.isLive(rid) && (!pred || pred(rid))) out.push(rid);
  return out;
}
