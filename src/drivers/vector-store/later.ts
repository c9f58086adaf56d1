// Rows written with `indexLater` (the change stream's writes: latency first). Such a row is in
// the mirror as soon as its write commits, and every search scores it exactly as a stray (search.ts
// withStrays) until a background step has added it to the HNSW graph and checked it (strays.ts
// checkStrays; a row its first pass misses stays listed until a batch of the deeper passes decides
// it, strays.ts DeeperChecks). The writer returns without paying the graph's insertion and the
// check (~1 ms a row at 256 dimensions, measured by `bun run bench pipeline`), and the event loop serves searches
// and the next write between steps. A row waiting here at a checkpoint is simply missing from the
// saved index: start-up adds every live row the index lacks (restart.ts coverLiveRows).
//
// Backfills write this way too (issue 16): a page's graph insertion used to hold the event loop
// for the whole page (hundreds of ms at 768 dimensions), so every search waited behind it. A
// writer with more than BACKLOG rows waiting is held back (`settle`) before its write, so the
// index sets a fast writer's pace and searches never score more than about BACKLOG strays.
//
// The insertion runs off the event loop (HnswIndex.addAsync): OFF_LOOP_ROWS rows at a time on a
// thread of their own, while the loop serves searches and writes. The last batch's checks search
// off the loop too (self-search.ts); reading their answers is the loop's only part.
import { type Added, byBackLinks } from "./back-links.ts";
import { addCurrentVersions, addCurrentVersionsAsync } from "./adds.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";
import type { Pacer } from "./pace.ts";
import { DeeperChecks } from "./strays.ts";
import type { CollectionStatus } from "./types.ts";

type Owner = {
  readonly hnsw: HnswIndex;
  readonly mirror: Mirror;
  readonly status: CollectionStatus;
  readonly closed: boolean;
  readonly pace: Pacer;
  /** Logs a failure of background work that went on without it. */
  failed(event: string, error: unknown): void;
  /** Rows taken off the stray list by their back links, to be searched for once the writes pause (sweeper.ts). */
  verifyLater(rids: number[]): void;
};

/** Rows that may wait for the graph before the next `indexLater` write waits for them. */
export const BACKLOG = 1024;

/**
 * The same for a change stream's writes (`streaming`). A fill is throughput: the graph may set its
 * pace. A stream is latency: its rows are searchable once written (scored as strays), so it waits
 * for the graph only when the graph falls this far behind, and a burst above what the graph takes
 * (2,000 changes/s against ~500 insertions/s on a busy 2-core machine) stays queryable at once.
 * Each search scans the waiting rows' codes natively: 64k rows at 256 dimensions ~16 MB, ~3 ms.
 */
export const STREAM_BACKLOG = 65_536;

/**
 * Rows one insertion off the loop takes: enough to keep the index's threads busy between the
 * loop's turns, few enough that they wait briefly as strays (a quarter of BACKLOG).
 */
const OFF_LOOP_ROWS = 256;

export class LaterIndexer {
  private readonly waiting = new Set<number>();
  private settled: { max: number; resolve: () => void }[] = [];
  private running: Promise<void> | null = null;
  /** Its rows are stray-listed until decided, so their searches yield to the loop. */
  private readonly deeper = new DeeperChecks({ background: true });
  /** Rows taken for an insertion off the loop that has not ended, and that insertion. */
  private inFlight = 0;
  private adding: Promise<void> | null = null;
  /** Callers of `holding` under way: no insertion starts meanwhile. */
  private holdCount = 0;
  /** `idle` callers waiting for the holds to end. */
  private released: (() => void)[] = [];

  constructor(private readonly owner: Owner) {}

  /** Rows just written (current versions in the mirror): findable now as strays, indexed soon. */
  note(rids: number[]): void {
    for (const rid of rids) {
      this.waiting.add(rid);
      this.owner.hnsw.strays.add(rid);
    }
    this.kick();
  }

  /** Rows just added on the loop with few back links: stray-listed (so found) until the search passes decide them. */
  checkSoon(rids: number[]): void {
    if (rids.length === 0) return;
    const { hnsw } = this.owner;
    for (const rid of rids) hnsw.strays.add(rid);
    this.deeper.hold(hnsw, rids, 0);
    this.kick();
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
      this.wakeSettled();
      // Rows noted, or released by `holding`, after the drain last looked and before it ended
      // (its kick found it still running): start again rather than leave them waiting.
      if (this.waiting.size > 0 && !this.holdCount && !this.owner.closed) this.kick();
    });
  }

  /**
   * Runs `work` with no insertion under way: waits for the one in flight, and starts none until
   * `work` ends (a checkpoint saves the graph meanwhile; checkpoint.ts saveCheckpointIndex).
   */
  async holding<T>(work: () => Promise<T>): Promise<T> {
    this.holdCount++;
    try {
      while (this.adding) await this.adding.catch(() => {});
      return await work();
    } finally {
      if (--this.holdCount === 0) {
        if (this.waiting.size > 0) this.kick();
        const released = this.released;
        this.released = [];
        for (const resolve of released) resolve();
      }
    }
  }

  /**
   * An insertion runs off the loop, or insertions are held (a checkpoint's save): the graph's lock
   * is taken, and an add on the loop would wait for it, the whole event loop with it (up to a
   * second on a busy machine). A write notes its rows instead.
   */
  get graphBusy(): boolean {
    return this.holdCount > 0 || this.adding !== null;
  }

  /** Resolves once the graph is free: no insertion off the loop, no hold. */
  async graphFree(): Promise<void> {
    while (!this.owner.closed) {
      if (this.adding) await this.adding.catch(() => {});
      else if (this.holdCount > 0) await new Promise<void>((resolve) => this.released.push(resolve));
      else return;
    }
  }

  /** Rows noted and not yet in the graph. */
  get backlog(): number {
    return this.waiting.size + this.inFlight;
  }

  /** Resolves once at most `max` rows wait (at once if so already, or if nothing drains them). */
  settle(max = BACKLOG): Promise<void> {
    if (this.backlog <= max || !this.running) return Promise.resolve();
    return new Promise((resolve) => this.settled.push({ max, resolve }));
  }

  private wakeSettled(): void {
    if (this.settled.length === 0) return;
    const size = this.backlog;
    const done = this.settled.filter((w) => size <= w.max || !this.running);
    this.settled = this.settled.filter((w) => !done.includes(w));
    for (const w of done) w.resolve();
  }

  /** Resolves once every row noted so far is in the graph (or gone), a hold (a checkpoint's save) waited out. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.running;
      else if (this.holdCount > 0 && this.waiting.size > 0 && !this.owner.closed) await new Promise<void>((resolve) => this.released.push(resolve));
      else return;
    }
  }

  private async drain(): Promise<void> {
    // Held (`holding`): rows wait, and the drain ends once nothing else is left; `holding` restarts it.
    const more = () => (this.waiting.size > 0 && !this.holdCount) || this.deeper.waiting > 0 || this.adding;
    while (more() && !this.owner.closed) {
      // Background work, unless a writer waits for it (`settle`): then it is the writer's path.
      // Starting an insertion off the loop takes the loop a moment: once a whole insertion's rows
      // wait it goes at once, so the inserting thread is not idle while a change stream outruns
      // it (2,000/s). Fewer rows wait out the foreground first: an insertion of a fill's one
      // 64-row write costs ~25 % more CPU a row than one of 256 (its threads start per call).
      const startsAdd = this.waiting.size >= OFF_LOOP_ROWS && !this.holdCount && !this.adding;
      const { foreground } = this.owner.pace.pacing;
      await (startsAdd || this.settled.length > 0 ? foreground.turn() : foreground.yieldTurn());
      const { hnsw, mirror, status } = this.owner;
      // An insertion always runs if it can; the last one's checks go on beside it.
      if (this.waiting.size > 0 && !this.holdCount && !this.adding) {
        const step = this.take(OFF_LOOP_ROWS);
        // While loading nothing is written; while rebuilding the rebuild places what it lists and
        // `add` skips versions already placed, and the sweep after it finds the strays.
        if (status === "loading") continue;
        this.adding = this.addOffLoop(hnsw, mirror, step).finally(() => (this.adding = null));
      } else if (this.deeper.waiting > 0) {
        // Rows whose first check missed, a batch at a time; they stay stray-listed (so found) until then.
        if (status === "ready") await this.deeper.run(hnsw, mirror);
        else this.deeper.clear(); // a load or rebuild sweeps every row after it
      } else if (this.adding) await this.adding;
    }
    await this.adding;
  }

  /** Up to `size` live rows out of the waiting set. */
  private take(size: number): number[] {
    const step: number[] = [];
    for (const rid of this.waiting) {
      this.waiting.delete(rid);
      if (this.owner.mirror.isLive(rid)) step.push(rid);
      if (step.length >= size) break;
    }
    return step;
  }

  /**
   * Inserts the rows' current versions off the loop, then decides them, unless the index was
   * replaced meanwhile: a compaction's index holds every live row's current version when it is
   * swapped in (compaction.ts), and its sweep follows.
   *
   * Rows with few back links are queued for the search passes (strays.ts DeeperChecks); the
   * others leave the stray list and are searched for once the writes pause (back-links.ts).
   */
  private async addOffLoop(hnsw: HnswIndex, mirror: Mirror, rids: number[]): Promise<void> {
    this.inFlight = rids.length;
    let added: Added = { rids, versions: [], linked: null };
    try {
      added = await addCurrentVersionsAsync(hnsw, mirror, rids);
    } catch (error) {
      // Once the drain's rejection ended the process (a reserve race, since fixed in graph.cpp).
      // The rows are stray-listed, so still found; try them on the loop, else leave them listed.
      this.owner.failed("vector_store.insert_failed", error);
      try {
        added = addCurrentVersions(hnsw, mirror, rids, true);
      } catch (again) {
        this.owner.failed("vector_store.insert_failed", again);
        return;
      }
    } finally {
      this.inFlight = 0;
    }
    if (this.owner.hnsw === hnsw && this.owner.status === "ready") {
      const { now, later } = byBackLinks(hnsw, mirror, added);
      this.deeper.hold(hnsw, now, 0);
      this.owner.verifyLater(later);
    }
    this.wakeSettled();
  }
}
