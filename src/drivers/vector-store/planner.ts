// Routing between the exact path and the HNSW path, from a cost model calibrated with
// `bun run bench query` and forced-path runs (CALIBRATION below).
//   exact over m matching rows  ≈ m × (EXACT_SQL_US + EXACT_VECTOR_US × dims/384)
//       (rids read through the metadata index, then a gather + SIMD scan of i8 codes, f32 re-score)
//   HNSW search for kq results  ≈ (HNSW_FIXED_US + HNSW_PER_RESULT_US × kq) × dims/384
// A filter of selectivity p = m/N needs kq ≈ OVERSAMPLE × k / p candidates, so the two cross at
// the m* solving  m·a = b + c·O·k·N/m; HNSW's recall adds a floor linear in N (exactCap).
// Route by the estimated match count, not by percent. These defaults hold on the benchmark's data;
// calibration.ts measures each collection and deepens (or replaces) filtered HNSW where they don't.
// The planner only decides: from counts, a sample of the mirror (both selectivity.ts) and the
// collection's calibration (never a vector, never SQL) it makes a Plan, a plain value search.ts
// runs. A bounded exact read carries the plan to follow past its limit, so a search never comes
// back here midway.
import type { Predicate } from "../store-api/index.ts";
import type { Mirror } from "./mirror.ts";
import { estimateSelectivity } from "./selectivity.ts";

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

/** Unfiltered searches over at most this many rows are exact (one gather chunk, ~0.3 ms). */
const EXACT_UNFILTERED_ROWS = 2048;

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
function deepening(breadth: number, expansionSearch: number): number {
  return Math.sqrt(breadth / expansionSearch);
}

/** Passing candidates a filtered search re-scores: a broad filter's passes crowd the top, so more of them. */
function filteredRescore(k: number, breadth: number, depth = 1): number {
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
function filteredWant(k: number): number {
  return k;
}

/** The cost model above, in µs: the exact path over `matches` rows. */
export function exactCostUs(matches: number, dims: number): number {
  return matches * (EXACT_SQL_US + EXACT_VECTOR_US * (dims / 384));
}

/**
 * The exact path over `matches` rows of a column order's runs (column-order.ts), in µs: native
 * i8 scans of contiguous codes (100k × 512: 5,000 rows 0.19 ms) and the f32 re-score of the best 40.
 */
export function orderScanUs(matches: number, dims: number): number {
  return ORDER_FIXED_US + matches * ORDER_ROW_US * (dims / 384);
}
const ORDER_FIXED_US = 20;
const ORDER_ROW_US = 0.028;

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

/** The candidates a first HNSW pass asks for; `depth` (calibration.ts) multiplies the whole search. */
function firstPassKq(want: number, selectivity: number, filtered: boolean, breadth: number, expansionSearch: number, depth = 1): number {
  const perPass = (want / Math.max(selectivity, 1e-6)) * (filtered ? OVERSAMPLE * deepening(breadth, expansionSearch) : 1);
  return Math.ceil(depth * Math.max(breadth, perPass));
}

/** An HNSW pass that still finds too few asks for twice as many, up to this many times the first. */
const MAX_WIDENING = 8;

/** What calibration.ts measured on the collection's own data, as the planner reads it. */
export interface Calibration {
  liveRows: number;
  /** Highest selectivity first. */
  bands: Band[];
  /** Mean recall@k of planUnfiltered's HNSW search; absent when not measured (too many rows to score exactly). */
  unfiltered?: number;
}

export interface Band {
  selectivity: number;
  /** `exact`, or the depth multiplier of the HNSW search. */
  choice: BandChoice;
  /** Mean recall@k of the chosen HNSW depth (1 for exact). */
  recall: number;
}

export type BandChoice = "exact" | number;

/** The band measured nearest (in log scale) to an estimated selectivity; null far below the lowest. */
export function bandFor(cal: Calibration, selectivity: number): Band | null {
  const lowest = cal.bands[cal.bands.length - 1];
  if (!lowest || selectivity < lowest.selectivity / 2) return null;
  const distance = (band: Band) => Math.abs(Math.log(band.selectivity / selectivity));
  return cal.bands.reduce((best, band) => (distance(band) < distance(best) ? band : best));
}

/** Score every row (with a filter: every matching row) exactly, from the mirror. */
export interface ExactPlan {
  path: "exact";
}

/**
 * The exact path when at most `limit` rows match, as one bounded SQL read finds; past it the
 * estimate was low and `beyond` runs, planned for the fewest matches that overflow the limit.
 */
export interface BoundedExactPlan {
  path: "exact-bounded";
  limit: number;
  beyond: ExactPlan | HnswPlan;
}

/** HNSW with exact post-filtering; its candidates are re-scored in f32 (search.ts). */
export interface HnswPlan {
  path: "hnsw";
  /** Candidates that must pass the filter before the search stops widening. */
  want: number;
  /** Candidates the first pass asks for; each further pass asks for twice as many, up to `maxKq`. */
  firstKq: number;
  maxKq: number;
  /** Passing candidates, in the index's order, re-scored in f32 (the index's strays beside them). */
  rescore: number;
  /**
   * Fewer than `want` found at `maxKq`: a filtered search answers exactly instead; an unfiltered
   * one keeps what it found (every row passes, so only dead keys can leave it short).
   */
  exactIfShort: boolean;
}

export type Plan = ExactPlan | BoundedExactPlan | HnswPlan;

/** The generation as the planner sees it: counts and settings, no rows. */
export interface PlanInput {
  k: number;
  liveRows: number;
  dims: number;
  /** False while the index is rebuilding: the exact path answers everything. */
  indexReady: boolean;
  expansionSearch: number;
  calibration: Calibration | null;
  /** Scales exactCap (VectorStoreOptions.exactCapScale). */
  capScale?: number;
  /** Rows whose order must be exact, when fewer than k (SearchRequest.exactTop): the re-rank margin is sized for them. */
  exactTop?: number;
}

export function planUnfiltered(input: PlanInput): ExactPlan | HnswPlan {
  if (input.liveRows <= EXACT_UNFILTERED_ROWS || !input.indexReady) return { path: "exact" };
  const breadth = searchBreadth(input.liveRows, input.expansionSearch);
  const want = Math.max(input.k, rerankWant(Math.min(input.k, input.exactTop ?? input.k), breadth));
  const firstKq = firstPassKq(want, 1, false, breadth, input.expansionSearch);
  return { path: "hnsw", want, firstKq, maxKq: firstKq * MAX_WIDENING, rescore: want, exactIfShort: false };
}

/**
 * Routes a filtered search by its match count: known (knownMatches) or estimated (`pred` sampled
 * over the mirror, or counted by a column order). `ordered`: the known matches are runs of a column
 * order (column-order.ts), scanned exactly and cheaply enough to take over from HNSW wherever they cost less.
 */
export function planFiltered(input: PlanInput, pred: Predicate<number>, mirror: Mirror, known: number | null = null, ordered = false): Plan {
  if (!input.indexReady) return { path: "exact" };
  return planSelective(input, filteredSelectivity(input, pred, mirror, known), known, ordered);
}

/** The share of live rows a filter matches, as planFiltered routes by it: known, or sampled (closer near the cap). */
export function filteredSelectivity(input: PlanInput, pred: Predicate<number>, mirror: Mirror, known: number | null): number {
  if (known !== null) return known / Math.max(1, input.liveRows);
  return estimateSelectivity(pred, mirror, exactCap(input.k, input.liveRows, input.capScale, input.dims));
}

/** planFiltered with the selectivity already estimated (search.ts keeps it for explain). */
export function planSelective(input: PlanInput, selectivity: number, known: number | null, ordered: boolean): Plan {
  if (!input.indexReady) return { path: "exact" };
  const cap = exactCap(input.k, input.liveRows, input.capScale, input.dims);
  const route = routeFiltered(selectivity, input.liveRows, cap);
  if (route.path === "hnsw" && known !== null && ordered) {
    const hnsw = planCalibrated(input, selectivity);
    const scale = input.capScale ?? 1;
    return hnsw.path === "exact" || orderScanUs(known, input.dims) <= scale * hnswCostUs(hnsw.firstKq, input.dims) ? { path: "exact" } : hnsw;
  }
  if (route.path === "hnsw") return planCalibrated(input, selectivity);
  // Overflowing the read means at least limit + 1 matches: the estimate rises to that.
  const beyond = planCalibrated(input, Math.max(selectivity, (route.limit + 1) / input.liveRows));
  return { path: "exact-bounded", limit: route.limit, beyond };
}

/**
 * A band that chose the exact path stands for filters up to this many times broader. Past it the
 * post-filter keeps that many times more of the same candidates, so the band's shortfall does not
 * carry over; and the exact path grows with the matches: at 1M × 768 a 50 % filter, mapped to an
 * exact 20 % band (the broadest measured, MAX_MATCHES), took 177 ms against ~3 ms through HNSW.
 */
const EXACT_BAND_REACH = 2;

/** The collection's own measurement (calibration.ts) may ask for a deeper search, or none. */
function planCalibrated(input: PlanInput, selectivity: number): ExactPlan | HnswPlan {
  const band = input.calibration ? bandFor(input.calibration, selectivity) : null;
  const breadth = searchBreadth(input.liveRows, input.expansionSearch);
  if (band?.choice === "exact") {
    if (selectivity <= band.selectivity * EXACT_BAND_REACH) return { path: "exact" };
    return filteredHnswPlan(input.k, selectivity, breadth, input.expansionSearch, 1);
  }
  return filteredHnswPlan(input.k, selectivity, breadth, input.expansionSearch, band?.choice ?? 1);
}

/** A filtered HNSW search; `depth` multiplies the whole search (calibration.ts measures each). */
export function filteredHnswPlan(k: number, selectivity: number, breadth: number, expansionSearch: number, depth = 1): HnswPlan {
  const want = filteredWant(k);
  const firstKq = firstPassKq(want, selectivity, true, breadth, expansionSearch, depth);
  return { path: "hnsw", want, firstKq, maxKq: firstKq * MAX_WIDENING, rescore: filteredRescore(k, breadth, depth), exactIfShort: true };
}
