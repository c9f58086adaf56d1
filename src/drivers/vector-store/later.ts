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
// Where the binding offers it (graph.ts), the insertion runs off the event loop: OFF_LOOP_ROWS
// rows at a time on a thread of their own, while the loop serves searches and writes and runs
// the last batch's checks in steps. Only the check is then loop work.
import { foreground } from "../../shared/foreground.ts";
import type { Vectors } from "./graph.ts";
import { type Added, byBackLinks } from "./back-links.ts";
import { addCurrentVersions, type HnswIndex } from "./hnsw.ts";
import { GATHER_ROWS, type Mirror } from "./mirror.ts";
import { Steps } from "./pace.ts";
import { DeeperChecks } from "./strays.ts";
import type { CollectionStatus } from "./types.ts";

type Owner = {
  readonly hnsw: HnswIndex;
  readonly mirror: Mirror;
  readonly status: CollectionStatus;
  readonly closed: boolean;
  /** Logs a failure of background work that went on without it. */
  failed(event: string, error: unknown): void;
  /** Rows taken off the stray list by their back links, to be searched for once the writes pause (sweeper.ts). */
  verifyLater(rids: number[]): void;
};

/** Rows that may wait for the graph before the next `indexLater` write waits for them. */
export const BACKLOG = 1024;

/**
 * Rows one insertion off the loop takes: enough to keep the index's threads busy between the
 * loop's turns, few enough that they wait briefly as strays (a quarter of BACKLOG).
 */
const OFF_LOOP_ROWS = 256;

export class LaterIndexer {
  private readonly waiting = new Set<number>();
  private settled: { max: number; resolve: () => void }[] = [];
  private running: Promise<void> | null = null;
  /** Steps sized by time (pace.ts): ~1 ms a row for the add and its check at 256 dimensions. */
  private readonly steps = new Steps(4, 256);
  private readonly deeper = new DeeperChecks();
  /** Rows taken for an insertion off the loop that has not ended, and that insertion. */
  private inFlight = 0;
  private adding: Promise<void> | null = null;
  /** Callers of `holding` under way: no insertion starts meanwhile. */
  private held = 0;

  constructor(private readonly owner: Owner) {}

  /** Rows just written (current versions in the mirror): findable now as strays, indexed soon. */
  note(rids: number[]): void {
    for (const rid of rids) {
      this.waiting.add(rid);
      this.owner.hnsw.strays.add(rid);
    }
    this.kick();
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
      this.wakeSettled();
    });
  }

  /**
   * Runs `work` with no insertion under way: waits for the one in flight, and starts none until
   * `work` ends (a checkpoint saves the graph meanwhile; checkpoint.ts saveCheckpointIndex).
   */
  async holding<T>(work: () => Promise<T>): Promise<T> {
    this.held++;
    try {
      while (this.adding) await this.adding.catch(() => {});
      return await work();
    } finally {
      if (--this.held === 0 && this.waiting.size > 0) this.kick();
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

  /** Resolves once every row noted so far is in the graph (or gone). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Held (`holding`): rows wait, and the drain ends once nothing else is left; `holding` restarts it.
    const more = () => (this.waiting.size > 0 && !this.held) || this.deeper.waiting > 0 || this.adding;
    while (more() && !this.owner.closed) {
      await foreground.yieldTurn();
      const { hnsw, mirror, status } = this.owner;
      const offLoop = hnsw.addsOffLoop;
      // Off the loop an insertion always runs if it can; on it, checks that piled up go first.
      if (this.waiting.size > 0 && !this.held && (offLoop ? !this.adding : !this.deeper.full)) {
        const step = this.take(offLoop ? OFF_LOOP_ROWS : this.steps.size);
        // While loading nothing is written; while rebuilding the rebuild places what it lists and
        // `add` skips versions already placed, and the sweep after it finds the strays.
        if (status === "loading") continue;
        if (offLoop) {
          this.adding = this.addOffLoop(hnsw, mirror, step).finally(() => (this.adding = null));
          continue;
        }
        this.steps.run(step.length, () => {
          const added = addCurrentVersions(hnsw, mirror, step, true);
          if (status !== "ready") return;
          const { now, later } = byBackLinks(hnsw, mirror, added);
          this.deeper.checkFirst(hnsw, mirror, now);
          this.owner.verifyLater(later);
        });
        this.wakeSettled();
      } else if (this.deeper.waiting > 0) {
        // Rows whose first check missed, a batch at a time; they stay stray-listed (so found) until then.
        if (status === "ready") this.deeper.run(hnsw, mirror);
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

/** `addCurrentVersions` (hnsw.ts) as one insertion off the event loop (HnswIndex.addAsync). */
async function addCurrentVersionsAsync(index: HnswIndex, mirror: Mirror, rids: number[]): Promise<Added> {
  const sorted = Float64Array.from(rids).sort();
  const versions = Array.from(sorted, (rid) => mirror.versionOf(rid) % 2 ** 32);
  const parts: Vectors[] = [];
  for (let i = 0; i < sorted.length; ) {
    const part = mirror.gatherForIndex(sorted, i, GATHER_ROWS).slice();
    parts.push(part);
    i += part.length / mirror.dims;
  }
  const linked = await index.addAsync(sorted, versions, concat(parts), (rid, version) => mirror.isCurrent(rid, version));
  return { rids: sorted, versions, linked };
}

function concat(parts: Vectors[]): Vectors {
  if (parts.length === 1) return parts[0]!;
  const length = parts.reduce((n, p) => n + p.length, 0);
  const out = parts[0] instanceof Int8Array ? new Int8Array(length) : new Float32Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
