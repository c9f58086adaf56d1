// Rows the HNSW graph cannot reach from their own vector ("strays", hnsw.ts). HNSW's neighbour
// pruning leaves some nodes with no way in — measured on random 256-dim vectors at M=16 (what
// the fake providers make; there is no structure to navigate by): ~0.05 % of 20k rows, a few
// % of 100k at ef 64 — and later inserts can prune the last link into an older node. Strays are
// found by searching rows by their own vector: each written row with few back links at once
// (back-links.ts; the others in the next quiet spell), and every live row in a sweep after each
// load and after quiet spells in the writes (sweeper.ts). Searches score the strays exactly beside the graph's candidates (search.ts
// withStrays), so once a sweep has run every live row is findable.
import type { HnswIndex } from "./hnsw.ts";
import { GATHER_ROWS, type Mirror } from "./mirror.ts";
import { searchBreadth } from "./planner.ts";
import { Steps } from "./pace.ts";
import { type CheckOptions, checkPasses, findsSelves } from "./self-search.ts";

/** The depth of each check. A sweep's steps are sized by time (pace.ts Steps). */
const STRAY_CHECK_K = 10;
/** A batch of deeper passes: from THREADED_ROWS (hnsw.ts), so on the index's threads; at most a step's length. */
const DEEPER_MIN_ROWS = 4;
const DEEPER_MAX_ROWS = 256;
/**
 * Notes which of these live rows a search by their own vector misses (~0.1-0.3 ms a row, off the
 * event loop). With a pass number, that pass alone: a row it misses while deeper passes remain is
 * left as it was and returned, for the next pass (DeeperChecks); otherwise every row is decided
 * and none is returned. A row deleted or rewritten while its search ran is left as it was: its new
 * version has checks of its own (later.ts, back-links.ts), and the answer was about the old one.
 */
export async function checkStrays(hnsw: HnswIndex, mirror: Mirror, rids: ArrayLike<number>, options: CheckOptions = {}): Promise<number[]> {
  const passes = options.passes ?? "all";
  const isCurrent = (rid: number, version: number) => mirror.isCurrent(rid, version);
  const undecided: number[] = [];
  const decides = passes === "all" || passes >= checkPasses(hnsw, STRAY_CHECK_K) - 1;
  const sorted = Float64Array.from(rids).sort(); // one gather per slab run (mirror.ts)
  for (let i = 0; i < sorted.length; ) {
    const vectors = mirror.gatherCodes(sorted, i, GATHER_ROWS).slice(); // own buffer: usearch ignores view offsets
    const n = vectors.length / mirror.dims;
    const step = sorted.subarray(i, i + n);
    const versions = Array.from(step, (rid) => mirror.versionOf(rid));
    const found = await findsSelves(hnsw, step, versions, vectors, STRAY_CHECK_K, isCurrent, options);
    step.forEach((rid, j) => {
      if (!mirror.isLive(rid) || mirror.versionOf(rid) !== versions[j]) return;
      if (found[j]) hnsw.strays.delete(rid);
      else if (decides) hnsw.strays.add(rid);
      else undecided.push(rid);
    });
    i += n;
  }
  return undecided;
}

/**
 * Rows a self-check's pass missed, waiting for the next pass in batches. Work done in ~5 ms steps
 * (a sweep, the later indexer) checks a handful of rows a step at 1M × 768, and each pass goes
 * to the rows the last one missed (ef 10 misses a third there, ef 64 a tenth: hnsw.ts
 * checkDepths), so the deep passes searched one or two rows at a time, on one thread
 * (hnsw.ts THREADED_ROWS): a sweep of 1M × 768 spent 147 of its 444 s at ef 404 on 84k rows
 * searched 1.6 at a time (333 s in all once batched). Held here per pass, they go down in
 * batches sized like any step (by time), on the index's threads. Until then a row keeps its
 * place in the stray list or out of it.
 */
export class DeeperChecks {
  /** Rows waiting, by the pass they wait for (1 and up; 0: rows inserted off the loop, later.ts). */
  private readonly queues = new Map<number, number[]>();
  private readonly steps = new Map<number, Steps>();
  private hnsw: HnswIndex | null = null;

  /**
   * `background`: the rows are stray-listed until decided (the later indexer's); see CheckOptions.
   * `sliceMs`: a batch's length (pace.ts Steps): a sweep's are long, the later indexer's short,
   * beside a change stream whose every await may wait for the reading of a batch's answers.
   */
  constructor(private readonly options: { background?: boolean; sliceMs?: number } = {}) {}

  /** A step's first pass over `rids`, now; the rows it misses are held for the next. */
  async checkFirst(hnsw: HnswIndex, mirror: Mirror, rids: ArrayLike<number>): Promise<void> {
    this.hold(hnsw, await checkStrays(hnsw, mirror, rids, { passes: 0, background: this.options.background }), 1);
  }

  /** Rows of `hnsw` that pass `pass - 1` missed. Rows held for an index since replaced are dropped (a rebuild sweeps anew). */
  hold(hnsw: HnswIndex, rids: number[], pass: number): void {
    this.follow(hnsw);
    if (rids.length === 0) return;
    const queue = this.queues.get(pass) ?? [];
    for (const rid of rids) queue.push(rid);
    this.queues.set(pass, queue);
  }

  get waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  /** Some pass has rows enough for a batch of a step's length. */
  get full(): boolean {
    return [...this.queues].some(([pass, queue]) => queue.length >= this.stepsOf(pass).size);
  }

  clear(): void {
    this.queues.clear();
  }

  /** One batch: of the deepest pass with a full one waiting, else (draining) of the deepest with any. The rows still live, at their current versions. */
  async run(hnsw: HnswIndex, mirror: Mirror): Promise<void> {
    this.follow(hnsw);
    const passes = [...this.queues.keys()].sort((a, b) => b - a);
    const pass = passes.find((p) => this.queues.get(p)!.length >= this.stepsOf(p).size) ?? passes[0];
    if (pass === undefined) return;
    const queue = this.queues.get(pass)!;
    const batch = queue.splice(0, this.stepsOf(pass).size).filter((rid) => mirror.isLive(rid));
    if (queue.length === 0) this.queues.delete(pass);
    this.hold(hnsw, await this.stepsOf(pass).run(batch.length, () => checkStrays(hnsw, mirror, batch, { passes: pass, background: this.options.background })), pass + 1);
  }

  private follow(hnsw: HnswIndex): void {
    if (hnsw === this.hnsw) return;
    this.queues.clear();
    this.hnsw = hnsw;
  }

  private stepsOf(pass: number): Steps {
    let steps = this.steps.get(pass);
    if (!steps) this.steps.set(pass, (steps = new Steps(DEEPER_MIN_ROWS, DEEPER_MAX_ROWS, this.options.sliceMs)));
    return steps;
  }
}

/**
 * Rows sampled after a load, and how many of them may miss themselves before the file is
 * doubted: a sound index misses a few (strays, above), damage misses far more (zeroed vectors: all).
 */
const SELF_CHECK_ROWS = 64;
const SELF_CHECK_MISSES = 16;

/**
 * After a load: a sample of live rows, spread over the rid range, searched by their own vector
 * must find themselves. A file whose checks all passed but whose vectors or links are damaged
 * (zeroed, or written by a bug) answers wrongly for many rows; this sees it. Null when fine.
 */
export function selfCheck(hnsw: HnswIndex, mirror: Mirror): string | null {
  const rids = mirror.liveRids();
  if (rids.length === 0) return null;
  const step = Math.max(1, Math.floor(rids.length / SELF_CHECK_ROWS));
  let misses = 0;
  let tried = 0;
  for (let i = Math.floor(step / 2); i < rids.length && tried < SELF_CHECK_ROWS; i += step, tried++) {
    const rid = rids[i]!;
    // Asked for as many results as searches of this index ask for, so it runs at their depth (hnsw.ts SELF_CHECK_EF); the first 10 count.
    const found = hnsw.search(mirror.indexVectorOf(rid), Math.max(10, searchBreadth(hnsw.liveSize, hnsw.params.expansionSearch)), (r, v) => mirror.isCurrent(r, v));
    // A row with an identical vector found instead (duplicated texts) still shows the way there works.
    if (!found.rids.slice(0, 10).includes(rid) && !((found.distances[0] ?? 1) < 1e-3)) misses++;
  }
  return misses > SELF_CHECK_MISSES ? `${misses} of ${tried} sampled rows not found by their own vector` : null;
}
