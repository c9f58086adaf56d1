// How deep a filtered HNSW search must go on this collection's own data. planner.ts's routing
// was calibrated on the benchmark's clustered data, where post-filtered HNSW keeps recall@10
// ≥ 0.99 down to ~4 % selectivity. Other shapes are harder: 20,000 × 64 vectors in 2,000 small
// clusters gave 0.85–0.96 at 5–50 % (the far neighbours are near-ties the i8 index orders
// loosely), and pgvector loses as much there. So, per collection, we measure: probe queries near
// stored rows, a pseudo-random subset of rows as the filter (selectivity p, independent of the
// vectors, as a metadata filter usually is), recall of the HNSW path at depth 1, 2, 4, 8 against
// the exact answer. A band whose depth-1 recall is clearly short (DEFAULT_FLOOR) then uses the
// cheapest choice (by the planner's cost model, so the outcome does not depend on timing noise)
// that reaches TARGET_RECALL; exact when none does. Runs in the background in short steps (pace.ts);
// searches use the defaults meanwhile. The unfiltered search's recall is measured too, for the
// query's `explain` only (the planner has nothing to choose there).
import { type Candidate, cutWithTies, exactTopK, rescore } from "./exact.ts";
import type { GenerationSpec, Predicate } from "../store-api/index.ts";
import type { HnswIndex } from "./hnsw.ts";
import { type Mirror, normalizeInPlace } from "./mirror.ts";
import { type Band, type Calibration, exactCostUs, filteredHnswPlan, type HnswPlan, hnswCostUs, planUnfiltered, searchBreadth } from "./planner.ts";
import { hnswCandidates, withStrays } from "./search.ts";
import { CALIBRATION_REST, type Pacer } from "./pace.ts";

/**
 * What a measurement reads: a generation's mirror and the index as it was when the measurement
 * started (a rebuild meanwhile replaces the generation's index, not this one; same rows).
 */
export interface CalibrationTarget {
  mirror: Mirror;
  index: HnswIndex;
  spec: GenerationSpec;
}

const LADDER = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01];
const DEPTHS = [1, 2, 4, 8];
const QUERIES = 48;
/**
 * Depth-1 recall probed against recall of new points, 20,000 × 64 at 50 / 20 / 10 / 5 %:
 * 141 clusters 0.998 / 1.000 / 0.998 / 0.985 probed, 1.000 / 1.000 / 0.995 / 0.981 new;
 * 400 clusters 1.000 / 0.990 / 0.965 / 0.967 probed, 1.000 / 0.984 / 0.965 / 0.960 new;
 * 2,000 clusters 0.965 / 0.902 / 0.917 / 0.960 probed, 0.929 / 0.849 / 0.914 / 0.963 new.
 */
const TARGET_RECALL = 0.99;
/**
 * Probed depth-1 recall at which the defaults are kept: on the benchmark's data (new points at
 * 0.996–0.999) the probes gave 0.985–0.992, so only a clear shortfall changes the search.
 */
const DEFAULT_FLOOR = 0.98;
/** Bands with fewer matching rows are left to the cost model: the exact path is cheap there. */
const MIN_MATCHES = 500;
/** The exact answers cost a scan of every matching row per query; larger bands are not measured. */
const MAX_MATCHES = 250_000;
const K = 10;
/** How far a probe moves from its row, in units of the row's nearest-neighbour distance (0.5: measured best). */
const PROBE_MOVE = 0.5;
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

/** Stable pseudo-random membership in [0, 1) per rid: a filter that ignores the vectors. */
function unitHash(rid: number): number {
  return (Math.imul(rid ^ 0x5bd1e995, 0x9e3779b1) >>> 0) / 4294967296;
}

/**
 * Measures the bands; null when the generation went away meanwhile (`closed`). `pause` yields to
 * searches between queries.
 */
export async function calibrate(target: CalibrationTarget, pause: () => Promise<void>, closed: () => boolean): Promise<Calibration | null> {
  const { mirror, index } = target;
  const live = mirror.liveRids();
  const dims = target.spec.dimensions;
  const expansionSearch = index.params.expansionSearch;
  const breadth = searchBreadth(live.length, expansionSearch);
  const queries = probeQueries(target, live, breadth);
  const bands: Band[] = [];
  for (const p of LADDER) {
    const pred = (rid: number) => unitHash(rid) < p;
    const matching = live.filter(pred);
    if (matching.length < MIN_MATCHES || matching.length > MAX_MATCHES) continue;
    const plan = (depth: number) => filteredHnswPlan(K, p, breadth, expansionSearch, depth);
    const depths = DEPTHS.filter((d) => hnswCostUs(plan(d).firstKq, dims) < exactCostUs(matching.length, dims));
    const plans = depths.map(plan);
    const recall = depths.map(() => 0);
    for (const query of queries) {
      if (closed()) return null;
      const truth = await exactTruth(mirror, query, matching, pause);
      for (const [i, plan] of plans.entries()) {
        recall[i]! += searchRecall(target, query, plan, pred, truth);
        await pause();
      }
    }
    const mean = recall.map((r) => r / queries.length);
    // The defaults stand unless clearly short: probes are noisy near the target (48 × 10 neighbours).
    const chosen = depths[0] === 1 && mean[0]! >= DEFAULT_FLOOR ? 0 : mean.findIndex((r) => r >= TARGET_RECALL);
    bands.push(chosen < 0 ? { selectivity: p, choice: "exact", recall: 1 } : { selectivity: p, choice: depths[chosen]!, recall: mean[chosen]! });
  }
  const unfiltered = await unfilteredRecall(target, queries, live, pause, closed);
  if (closed()) return null;
  return unfiltered === undefined ? { liveRows: live.length, bands } : { liveRows: live.length, bands, unfiltered };
}

/** recall@K of one HNSW search by `plan` against the exact answer `truth`. */
function searchRecall({ mirror, index }: CalibrationTarget, query: Float32Array, plan: HnswPlan, pred: Predicate<number> | null, truth: Set<number>): number {
  const found = hnswCandidates(index, mirror, query, plan, pred, null);
  if (!found.complete && plan.exactIfShort) return 1; // the search falls back to the exact path
  // With the strays, as searches score them (search.ts run): a band measured without them
  // read short on a large graph and sent broad filters to the exact path (1M × 768: 50 % in 177 ms).
  const rids = withStrays(index, mirror, query, found.rids.slice(0, plan.rescore), pred, Math.max(plan.rescore, K));
  // Scored as the truth is (exactTopK), so only the candidates found differ. A compact
  // mirror's truth ranks by the codes' cosine with the quantized query, rescore by the f32
  // query's: near-ties ordered two ways capped recall near 0.98 at every depth, and at
  // 1M × 768 sent the 5 % and 20 % bands exact (a 5 % filter in 18 ms instead of 5.5).
  const top = exactTopK(mirror, query, Uint32Array.from(rids).sort(), K).slice(0, K);
  return top.filter((c) => truth.has(c.rid)).length / Math.min(K, truth.size || K);
}

/**
 * Mean recall@K of planUnfiltered's search, reported by `explain` (explain.ts); undefined where
 * that search is exact, or past MAX_MATCHES rows, whose truths (every live row scored per probe)
 * would cost more than all the bands'. Up to there it adds about one band's scan of every row.
 */
async function unfilteredRecall(target: CalibrationTarget, queries: Float32Array[], live: Uint32Array, pause: () => Promise<void>, closed: () => boolean): Promise<number | undefined> {
  if (live.length > MAX_MATCHES || queries.length === 0) return undefined;
  const input = { k: K, liveRows: live.length, dims: target.spec.dimensions, indexReady: true, expansionSearch: target.index.params.expansionSearch, calibration: null };
  const plan = planUnfiltered(input);
  if (plan.path !== "hnsw") return undefined;
  let recall = 0;
  for (const query of queries) {
    if (closed()) return undefined;
    recall += searchRecall(target, query, plan, null, await exactTruth(target.mirror, query, live, pause));
    await pause();
  }
  return recall / queries.length;
}

/**
 * Rows per slice of a probe's exact answer. A whole band's scan (48k rows at 256 dimensions) held
 * the event loop ~25 ms per probe, and every await of a change being applied meanwhile waited
 * that long (pace.ts); a slice is a few ms, and the slices' top-k merge to the band's.
 */
const TRUTH_SLICE_ROWS = 8192;

async function exactTruth(mirror: Mirror, query: Float32Array, matching: Uint32Array, pause: () => Promise<void>): Promise<Set<number>> {
  const found: Candidate[] = [];
  for (let i = 0; i < matching.length; i += TRUTH_SLICE_ROWS) {
    found.push(...exactTopK(mirror, query, matching.subarray(i, i + TRUTH_SLICE_ROWS), K));
    await pause();
  }
  return new Set(cutWithTies(found, K).map((c) => c.rid));
}

/**
 * Probe queries that are not rows of the index (a row searched for finds itself and the
 * neighbours it was linked to, which flatters the graph): a row, at a stride, moved in a random
 * direction by its distance to its nearest neighbour — as far from the data as a new point
 * drawn from the same distribution tends to be.
 */
function probeQueries({ mirror, index, spec }: CalibrationTarget, live: Uint32Array, breadth: number): Float32Array[] {
  const dims = spec.dimensions;
  const step = Math.max(1, Math.floor(live.length / QUERIES));
  let seed = 0x2545f491;
  const gaussian = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const u = (seed + 1) / 4294967297;
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return Math.sqrt(-2 * Math.log(u)) * Math.cos((2 * Math.PI * seed) / 4294967296);
  };
  const out: Float32Array[] = [];
  for (let i = 0; i < QUERIES && i * step < live.length; i++) {
    const self = live[i * step]!;
    const row = mirror.vectorOf(self);
    const nearest = rescore(mirror, row, index.search(row, Math.min(breadth, index.size), (rid, v) => mirror.isCurrent(rid, v)).rids.filter((rid) => rid !== self));
    const gap = Math.sqrt(2 * Math.max(0, Math.min(...nearest.map((c) => c.distance), 1))); // unit vectors: |a − b|² = 2(1 − cos)
    const noise = Float32Array.from({ length: dims }, gaussian);
    const scale = (PROBE_MOVE * gap) / Math.sqrt(noise.reduce((sum, x) => sum + x * x, 0));
    for (let j = 0; j < dims; j++) row[j]! += noise[j]! * scale;
    normalizeInPlace(row, 0, dims);
    out.push(row);
  }
  return out;
}

/** What a calibration reads of its generation (the index object changes on a compaction). */
export interface CalibrationHost {
  readonly state: string;
  readonly closed: boolean;
  readonly mirror: Mirror;
  readonly hnsw: HnswIndex;
  readonly spec: GenerationSpec;
  readonly pace: Pacer;
}

/** A generation's calibration: the last measurement, and one at a time in the background. */
export class Calibrator {
  calibration: Calibration | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly host: CalibrationHost,
    private readonly report: (event: string, fields: Record<string, unknown>) => void,
  ) {}

  /** Starts a background calibration when the index is ready and the last one is missing or stale. */
  ifStale(): void {
    const { host } = this;
    if (host.state !== "ready" || this.running || !calibratable(host.mirror.liveCount)) return;
    if (isStale(this.calibration, host.mirror.liveCount)) void this.now();
  }

  /** Measures now (or joins the measurement under way). A failure leaves the last one, or the defaults, in place. */
  now(): Promise<void> {
    const { host } = this;
    this.running ??= (async () => {
      const started = host.pace.clock.now();
      try {
        if (host.state !== "ready" || !calibratable(host.mirror.liveCount)) return;
        const result = await calibrate({ mirror: host.mirror, index: host.hnsw, spec: host.spec }, host.pace.pauser(CALIBRATION_REST), () => host.closed);
        if (!result) return;
        this.calibration = result;
        this.report("vector_store.calibrated", { rows: result.liveRows, bands: result.bands, ms: Math.round(host.pace.clock.now() - started) });
      } catch (e) {
        this.report("vector_store.calibration_failed", { error: String(e) });
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}
