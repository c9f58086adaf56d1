// Routing between the exact path and the HNSW path, from a cost model measured with
// `bun run bench query` (100k × 384, f16, M=16, ef=64, one search thread, 2 shared cores):
//   exact over m matching rows  ≈ 0.45 µs × m × dims/384   (SQL rid fetch 0.13 + gather 0.2 + SIMD scan 0.1)
//   HNSW search at ef = kq      ≈ 4.5 µs × max(kq, ef) × dims/384
// A filter of selectivity p needs kq ≈ 1.6 × k / p = 1.6 × k × N / m candidates, so the two
// cross at m* = sqrt(10 × 1.6 × k × N): ~4,000 rows at N = 100k, ~12,600 at N = 1M (the
// issue's anchors saw 2,000–4,000 at 100k). Route by match count against m*, not by percent.
import type { Predicate } from "./filters/index.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";

/** One HNSW candidate (ef unit) costs about this many exactly scanned rows (measured ~10). */
export const HNSW_UNIT_IN_EXACT_ROWS = 10;
/** Margin over k/p: with 1.6 fewer than k candidates pass only ~5 % of the time (binomial), so one pass usually does. */
const OVERSAMPLE = 1.6;
/** The sample must see this many times m* before the SQL count is skipped (sampling noise). */
const CLEARLY_BROAD = 1.5;
const SAMPLE_ROWS = 256;

/** Unfiltered searches over at most this many rows are exact (one gather chunk, ~0.3 ms). */
export const EXACT_UNFILTERED_ROWS = 2048;

/** Candidates to re-rank exactly for an unfiltered top-k: f32 re-ranking fixes the f16 index's near-ties. */
export function rerankWant(k: number): number {
  return 2 * k + 10;
}

/** Rows that must pass a filter among the HNSW candidates. */
export function filteredWant(k: number): number {
  return k;
}

/** The match count under which the exact path wins (m* above); `scale` lets tests move it. */
export function exactCap(k: number, liveRows: number, scale = 1): number {
  return Math.max(1, Math.round(scale * Math.sqrt(HNSW_UNIT_IN_EXACT_ROWS * OVERSAMPLE * filteredWant(k) * liveRows)));
}

/** Fraction of live rows matching `pred`, from a fixed stride sample of the mirror (a few µs). */
export function estimateSelectivity(pred: Predicate<number>, mirror: Mirror): number {
  const step = Math.max(1, Math.floor(mirror.ridEnd / SAMPLE_ROWS));
  let seen = 0;
  let hits = 0;
  for (let rid = step >> 1; rid < mirror.ridEnd && seen < SAMPLE_ROWS * 2; rid += step) {
    if (!mirror.isLive(rid)) continue;
    seen++;
    if (pred(rid)) hits++;
  }
  return seen === 0 ? 1 : hits / seen;
}

/** True when the sample alone shows the filter is far too broad for the exact path. */
export function clearlyBroad(estimated: number, liveRows: number, cap: number): boolean {
  return estimated * liveRows > CLEARLY_BROAD * cap;
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
