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
import { foreground } from "../../shared/foreground.ts";
import { addCurrentVersions, type HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";
import { Steps } from "./pace.ts";
import { DeeperChecks } from "./strays.ts";
import type { CollectionStatus } from "./types.ts";

type Owner = { readonly hnsw: HnswIndex; readonly mirror: Mirror; readonly status: CollectionStatus; readonly closed: boolean };

/** Rows that may wait for the graph before the next `indexLater` write waits for them. */
export const BACKLOG = 1024;

export class LaterIndexer {
  private readonly waiting = new Set<number>();
  private settled: { max: number; resolve: () => void }[] = [];
  private running: Promise<void> | null = null;
  /** Steps sized by time (pace.ts): ~1 ms a row for the add and its check at 256 dimensions. */
  private readonly steps = new Steps(4, 256);
  private readonly deeper = new DeeperChecks();

  constructor(private readonly owner: Owner) {}

  /** Rows just written (current versions in the mirror): findable now as strays, indexed soon. */
  note(rids: number[]): void {
    for (const rid of rids) {
      this.waiting.add(rid);
      this.owner.hnsw.strays.add(rid);
    }
    this.running ??= this.drain().finally(() => {
      this.running = null;
      this.wakeSettled();
    });
  }

  /** Rows noted and not yet in the graph. */
  get backlog(): number {
    return this.waiting.size;
  }

  /** Resolves once at most `max` rows wait (at once if so already, or if nothing drains them). */
  settle(max = BACKLOG): Promise<void> {
    if (this.waiting.size <= max || !this.running) return Promise.resolve();
    return new Promise((resolve) => this.settled.push({ max, resolve }));
  }

  private wakeSettled(): void {
    if (this.settled.length === 0) return;
    const size = this.waiting.size;
    const done = this.settled.filter((w) => size <= w.max || !this.running);
    this.settled = this.settled.filter((w) => !done.includes(w));
    for (const w of done) w.resolve();
  }

  /** Resolves once every row noted so far is in the graph (or gone). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while ((this.waiting.size > 0 || this.deeper.waiting > 0) && !this.owner.closed) {
      await foreground.yieldTurn();
      if (this.deeper.full || this.waiting.size === 0) {
        // Rows whose first check missed, a batch at a time; they stay stray-listed (so found) until then.
        if (this.owner.status === "ready") this.deeper.run(this.owner.hnsw, this.owner.mirror);
        else this.deeper.clear(); // a load or rebuild sweeps every row after it
        continue;
      }
      const step: number[] = [];
      const size = this.steps.size;
      for (const rid of this.waiting) {
        this.waiting.delete(rid);
        if (this.owner.mirror.isLive(rid)) step.push(rid);
        if (step.length >= size) break;
      }
      const { hnsw, mirror, status } = this.owner;
      // While loading nothing is written; while rebuilding the rebuild places what it lists and
      // `add` skips versions already placed, and the sweep after it finds the strays.
      if (status === "loading") continue;
      this.steps.run(step.length, () => {
        addCurrentVersions(hnsw, mirror, step);
        if (status === "ready") this.deeper.checkFirst(hnsw, mirror, step);
      });
      this.wakeSettled();
    }
  }
}
