// How deep a filtered HNSW search must go on this collection's own data. planner.ts's routing
// was calibrated on the benchmark's clustered data, where post-filtered HNSW keeps recall@10
// ≥ 0.99 down to ~4 % selectivity. Other shapes are harder: 20,000 × 64 vectors in 2,000 small
// clusters gave 0.85–0.96 at 5–50 % (the far neighbours are near-ties the i8 index orders
// loosely), and pgvector loses as much there. So, per collection, we measure: probe queries near
// stored rows, a pseudo-random subset of rows as the filter (selectivity p, independent of the
// vectors, as a metadata filter usually is), recall of the HNSW path at depth 1, 2, 4, 8 against
// the exact answer. Each selectivity band then uses the cheapest choice (by the planner's cost
// model, so the outcome does not depend on timing noise) that reaches TARGET_RECALL; exact when
// none does. Runs in the background, a query at a time; searches use the defaults meanwhile.
import { cutWithTies, exactTopK, rescore } from "./exact.ts";
import type { Generation } from "./generation.ts";
import { normalizeInPlace } from "./mirror.ts";
import { exactCostUs, filteredRescore, filteredWant, firstPassKq, hnswCandidates, hnswCostUs, searchBreadth } from "./planner.ts";

export type BandChoice = "exact" | number;

export interface Band {
  selectivity: number;
  /** `exact`, or the depth multiplier of the HNSW search. */
  choice: BandChoice;
  /** Mean recall@k of the chosen HNSW depth (1 for exact). */
  recall: number;
}

export interface Calibration {
  liveRows: number;
  /** Highest selectivity first. */
  bands: Band[];
}

const LADDER = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01];
const DEPTHS = [1, 2, 4, 8];
const QUERIES = 48;
/** Above the 0.99 goal: probes still flatter the graph (0.99 probed gave 0.97–0.99 on new points). */
const TARGET_RECALL = 0.995;
/** Bands with fewer matching rows are left to the cost model: the exact path is cheap there. */
const MIN_MATCHES = 500;
/** The exact answers cost a scan of every matching row per query; larger bands are not measured. */
const MAX_MATCHES = 250_000;
const K = 10;
/** A calibration is redone once the live row count moved this much (either way). */
const STALE_RATIO = 1.25;

export function isStale(cal: Calibration | null, liveRows: number): boolean {
  if (!cal) return true;
  return liveRows > cal.liveRows * STALE_RATIO || liveRows * STALE_RATIO < cal.liveRows;
}

/** Whether a collection this size is worth calibrating: at least one band is measurable. */
export function calibratable(liveRows: number): boolean {
  return liveRows * LADDER[0]! >= MIN_MATCHES;
}

/** The band measured nearest (in log scale) to an estimated selectivity; null far below the lowest. */
export function bandFor(cal: Calibration, selectivity: number): Band | null {
  const lowest = cal.bands[cal.bands.length - 1];
  if (!lowest || selectivity < lowest.selectivity / 2) return null;
  const distance = (band: Band) => Math.abs(Math.log(band.selectivity / selectivity));
  return cal.bands.reduce((best, band) => (distance(band) < distance(best) ? band : best));
}

/** Stable pseudo-random membership in [0, 1) per rid: a filter that ignores the vectors. */
function unitHash(rid: number): number {
  return (Math.imul(rid ^ 0x5bd1e995, 0x9e3779b1) >>> 0) / 4294967296;
}

/** Measures the bands; null when the generation went away meanwhile. `pause` yields to searches. */
export async function calibrate(gen: Generation, pause: () => Promise<void>): Promise<Calibration | null> {
  const mirror = gen.mirror;
  const live = mirror.liveRids();
  const dims = gen.spec.dimensions;
  const breadth = searchBreadth(live.length, gen.hnsw.params.expansionSearch);
  const queries = probeQueries(gen, live, breadth);
  const bands: Band[] = [];
  for (const p of LADDER) {
    const matching = live.filter((rid) => unitHash(rid) < p);
    if (matching.length < MIN_MATCHES || matching.length > MAX_MATCHES) continue;
    const depths = DEPTHS.filter((d) => hnswCostUs(firstPassKq(filteredWant(K), p, true, breadth, gen.hnsw, d), dims) < exactCostUs(matching.length, dims));
    const recall = depths.map(() => 0);
    const pred = (rid: number) => unitHash(rid) < p;
    for (const query of queries) {
      if (gen.closed) return null;
      const truth = new Set(exactTopK(mirror, query, matching, K).map((c) => c.rid));
      depths.forEach((d, i) => {
        const found = hnswCandidates(gen.hnsw, mirror, query, filteredWant(K), pred, p, null, breadth, d);
        if (!found.complete) return void (recall[i]! += 1); // the search falls back to the exact path
        const top = cutWithTies(rescore(mirror, query, found.rids.slice(0, filteredRescore(K, breadth, d))), K).slice(0, K);
        recall[i]! += top.filter((c) => truth.has(c.rid)).length / Math.min(K, truth.size || K);
      });
      await pause();
    }
    const chosen = depths.findIndex((_, i) => recall[i]! / queries.length >= TARGET_RECALL);
    bands.push(chosen < 0 ? { selectivity: p, choice: "exact", recall: 1 } : { selectivity: p, choice: depths[chosen]!, recall: recall[chosen]! / queries.length });
  }
  return { liveRows: live.length, bands };
}

/**
 * Probe queries that are not rows of the index (a row searched for finds itself and the
 * neighbours it was linked to, which flatters the graph): the midpoint of a row, at a stride,
 * and its fifth nearest neighbour — a new point in the same neighbourhood.
 */
function probeQueries(gen: Generation, live: Uint32Array, breadth: number): Float32Array[] {
  const mirror = gen.mirror;
  const step = Math.max(1, Math.floor(live.length / QUERIES));
  const out: Float32Array[] = [];
  for (let i = 0; i < QUERIES && i * step < live.length; i++) {
    const row = mirror.vectorOf(live[i * step]!);
    const near = gen.hnsw.search(row, Math.min(breadth, gen.hnsw.size)).rids.filter((rid) => mirror.isLive(rid));
    const other = mirror.vectorOf(near[Math.min(5, near.length - 1)] ?? live[i * step]!);
    for (let j = 0; j < row.length; j++) row[j]! += other[j]!;
    normalizeInPlace(row, 0, row.length);
    out.push(row);
  }
  return out;
}
