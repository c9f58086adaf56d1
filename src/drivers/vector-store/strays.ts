// Rows the HNSW graph cannot reach from their own vector ("strays", hnsw.ts). HNSW's neighbour
// pruning leaves some nodes with no way in — measured on random 256-dim vectors at M=16 (what
// the fake providers make; there is no structure to navigate by): ~0.05 % of 20k rows, a few
// % of 100k at ef 64 — and later inserts can prune the last link into an older node. usearch's
// JS binding exposes no neighbour lists, so strays are found by searching rows by their own
// vector: each written row at once, and every live row in a sweep after each load and after
// every quiet spell in the writes. Searches score the strays exactly beside the graph's
// candidates (search.ts withStrays), so once a sweep has run every live row is findable.
import { foreground } from "../../shared/foreground.ts";
import type { HnswIndex, Passes } from "./hnsw.ts";
import { GATHER_ROWS, type Mirror } from "./mirror.ts";
import { searchBreadth } from "./planner.ts";
import { Steps } from "./pace.ts";
import type { CollectionStatus } from "./types.ts";

/** The depth of each check. A sweep's steps are sized by time (pace.ts Steps). */
const STRAY_CHECK_K = 10;
/** A batch of deeper passes: from THREADED_ROWS (hnsw.ts), so on the index's threads; at most a step's length. */
const DEEPER_MIN_ROWS = 4;
const DEEPER_MAX_ROWS = 256;
/** A sweep starts once writes have paused this long (a backfill's pages come faster). */
const SWEEP_QUIET_MS = 500;
/**
 * A sweep checks every live row, so it is not run after every quiet spell (a cdc table pauses
 * after each change: at 100k rows that was 30 s of CPU per change). Written rows are checked at
 * once; the rows a later insert may cut off are caught by a sweep due when writes since the last
 * one reach 1/SWEEP_WRITE_SHARE of the live rows (≤ 8 checks per written row, amortised), or
 * when SWEEP_COST_FACTOR × the last sweep's duration has passed (≤ ~5 % of a core).
 */
const SWEEP_WRITE_SHARE = 8;
const SWEEP_COST_FACTOR = 20;
/**
 * While writes go on, a sweep that started in a pause takes at most this share of the event loop
 * (it rests between steps): under a steady change stream it is background work, not a stall of
 * every write and search behind it (a 12k-row sweep is ~4 s of CPU; a cdc table under 500
 * changes/s pauses often enough to start one every few seconds).
 */
const SWEEP_BUSY_SHARE = 0.1;

/**
 * Notes which of these live rows a search by their own vector misses (~0.1-0.3 ms a row). With a
 * pass number, that pass alone: a row it misses while deeper passes remain is left as it was and
 * returned, for the next pass (DeeperChecks); otherwise every row is decided and none is returned.
 */
export function checkStrays(hnsw: HnswIndex, mirror: Mirror, rids: ArrayLike<number>, passes: Passes = "all"): number[] {
  const isCurrent = (rid: number, version: number) => mirror.isCurrent(rid, version);
  const undecided: number[] = [];
  const decides = passes === "all" || passes >= hnsw.checkPasses(STRAY_CHECK_K) - 1;
  const sorted = Float64Array.from(rids).sort(); // one gather per slab run (mirror.ts)
  for (let i = 0; i < sorted.length; ) {
    const vectors = mirror.gatherForIndex(sorted, i, GATHER_ROWS).slice(); // own buffer: usearch ignores view offsets
    const n = vectors.length / mirror.dims;
    const step = sorted.subarray(i, i + n);
    const found = hnsw.findsSelves(step, Array.from(step, (rid) => mirror.versionOf(rid)), vectors, STRAY_CHECK_K, isCurrent, passes);
    step.forEach((rid, j) => {
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

  /** A step's first pass over `rids`, now; the rows it misses are held for the next. */
  checkFirst(hnsw: HnswIndex, mirror: Mirror, rids: ArrayLike<number>): void {
    this.hold(hnsw, checkStrays(hnsw, mirror, rids, 0), 1);
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
  run(hnsw: HnswIndex, mirror: Mirror): void {
    this.follow(hnsw);
    const passes = [...this.queues.keys()].sort((a, b) => b - a);
    const pass = passes.find((p) => this.queues.get(p)!.length >= this.stepsOf(p).size) ?? passes[0];
    if (pass === undefined) return;
    const queue = this.queues.get(pass)!;
    const batch = queue.splice(0, this.stepsOf(pass).size).filter((rid) => mirror.isLive(rid));
    if (queue.length === 0) this.queues.delete(pass);
    this.hold(hnsw, this.stepsOf(pass).run(batch.length, () => checkStrays(hnsw, mirror, batch, pass)), pass + 1);
  }

  private follow(hnsw: HnswIndex): void {
    if (hnsw === this.hnsw) return;
    this.queues.clear();
    this.hnsw = hnsw;
  }

  private stepsOf(pass: number): Steps {
    let steps = this.steps.get(pass);
    if (!steps) this.steps.set(pass, (steps = new Steps(DEEPER_MIN_ROWS, DEEPER_MAX_ROWS)));
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

/** What a sweep reads of its generation (the index object changes on a rebuild). */
export interface SweepHost {
  readonly hnsw: HnswIndex;
  readonly mirror: Mirror;
  readonly closed: boolean;
  readonly status: CollectionStatus;
  /** A sweep made `strays` whole (checkedAll): the last checkpoint's description may say so. */
  straysSwept(): void;
}

export class StraySweeper {
  private sweeping: Promise<void> | null = null;
  /** A full sweep is owed: after a load or rebuild, or once the write/time budget says so. */
  private due = true;
  /**
   * Some rows in the index were placed without a check (a load or rebuild) and no full sweep has
   * finished since: `strays` may miss some. False once one has, so a checkpoint can say its
   * strays are the whole list (checkpoint.ts `straysChecked`). `owedAt` counts owe() calls, so a
   * sweep that began before the latest one does not clear it.
   */
  private owed = true;
  private owedAt = 0;
  private writtenSinceSweep = 0;
  private lastSweepEnd = 0;
  private lastSweepMs = 0;
  private lastWriteAt = 0;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly host: SweepHost,
    private readonly report: (event: string, fields: Record<string, unknown>) => void,
  ) {}

  /** A load or rebuild placed rows without checking them: sweep all of them. */
  owe(): void {
    this.due = true;
    this.owed = true;
    this.owedAt++;
  }

  /** A new, empty index: every row it will hold is checked as it is written. */
  startEmpty(): void {
    this.owed = false;
  }

  /**
   * A load whose checkpoint listed every stray (and whose rows added since were checked): no sweep
   * is owed; the write/time budget goes on from the last full sweep's duration (`sweepMs`).
   */
  resume(sweepMs: number): void {
    this.due = false;
    this.owed = false;
    this.lastSweepEnd = performance.now();
    this.lastSweepMs = sweepMs;
  }

  /**
   * `strays` is as whole as a running index keeps it: no sweep owed since a load or rebuild, and
   * none due by the write budget (rows written since the last sweep may have cut earlier rows
   * off: 1M rows checked only as they were written listed 507 strays; a sweep of the built
   * graph finds 6,834). What a checkpoint may record as complete.
   */
  get checkedAll(): boolean {
    return !this.owed && !this.due;
  }

  /** The last full sweep's duration (ms), 0 before one: the time budget's unit (noteWrite). */
  get sweepMs(): number {
    return this.lastSweepMs;
  }

  /** `rows` were written (each already checked): sweep once the writes pause, if the budget allows. */
  noteWrite(rows: number): void {
    this.writtenSinceSweep += rows;
    this.lastWriteAt = performance.now();
    const byRows = this.writtenSinceSweep * SWEEP_WRITE_SHARE >= this.host.mirror.liveCount;
    const byTime = this.writtenSinceSweep > 0 && performance.now() - this.lastSweepEnd >= SWEEP_COST_FACTOR * this.lastSweepMs;
    if (!byRows && !byTime) return;
    this.due = true;
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => void this.now(), SWEEP_QUIET_MS);
    this.quietTimer.unref?.();
  }

  /** Is a sweep running, or due on a ready index? */
  get pending(): boolean {
    return this.sweeping !== null || (this.due && this.host.status === "ready" && !this.host.closed);
  }

  /** Runs sweeps until none is due; resolves when done (at once when the index is not ready). */
  now(): Promise<void> {
    if (this.sweeping || this.host.closed || this.host.status !== "ready") return this.sweeping ?? Promise.resolve();
    this.sweeping = (async () => {
      while (this.due && !this.host.closed && this.host.status === "ready") {
        this.due = false;
        this.writtenSinceSweep = 0;
        const started = performance.now();
        const owedAt = this.owedAt;
        if ((await this.sweep()) && owedAt === this.owedAt) this.owed = false;
        this.lastSweepEnd = performance.now();
        this.lastSweepMs = this.lastSweepEnd - started;
      }
      if (this.checkedAll && !this.host.closed) this.host.straysSwept();
    })()
      .catch((e) => this.report("vector_store.upkeep_failed", { error: String(e) }))
      .finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  /** Every live row, a step at a time; abandoned if the index is replaced (a rebuild sweeps anew). True when it checked them all. */
  private async sweep(): Promise<boolean> {
    const { hnsw, mirror } = this.host;
    const rids = mirror.liveRids();
    const steps = new Steps(8, 512);
    const deeper = new DeeperChecks();
    for (let i = 0; i < rids.length || deeper.waiting > 0; ) {
      if (this.host.closed || this.host.hnsw !== hnsw) return false;
      const started = performance.now();
      if (deeper.full || i >= rids.length) deeper.run(hnsw, mirror);
      else {
        const step = Array.from(rids.subarray(i, (i += steps.size))).filter((rid) => mirror.isLive(rid));
        steps.run(step.length, () => deeper.checkFirst(hnsw, mirror, step));
      }
      const took = performance.now() - started;
      const writing = performance.now() - this.lastWriteAt < SWEEP_QUIET_MS;
      if (writing) await new Promise((resolve) => setTimeout(resolve, (took * (1 - SWEEP_BUSY_SHARE)) / SWEEP_BUSY_SHARE));
      await foreground.yieldTurn();
    }
    if (hnsw.strays.size > 0) this.report("vector_store.index_strays", { rows: hnsw.strays.size });
    return true;
  }
}
