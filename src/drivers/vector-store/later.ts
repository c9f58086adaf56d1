// Rows written with `indexLater` (the change stream's writes: latency first). Such a row is in
// the mirror as soon as its write commits, and every search scores it exactly as a stray (search.ts
// withStrays) until a background step has added it to the HNSW graph and checked it (strays.ts
// checkStrays). The writer returns without paying the graph's insertion and the check (~1 ms a row
// at 256 dimensions, measured by `bun run bench pipeline`), and the event loop serves searches
// and the next write between steps. A row waiting here at a checkpoint is simply missing from the
// saved index: start-up adds every live row the index lacks (restart.ts coverLiveRows).
import { addCurrentVersions, type HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";
import { Steps } from "./pace.ts";
import { checkStrays } from "./strays.ts";
import type { CollectionStatus } from "./types.ts";

type Owner = { readonly hnsw: HnswIndex; readonly mirror: Mirror; readonly status: CollectionStatus; readonly closed: boolean };

export class LaterIndexer {
  private readonly waiting = new Set<number>();
  private running: Promise<void> | null = null;
  /** Steps sized by time (pace.ts): ~1 ms a row for the add and its check at 256 dimensions. */
  private readonly steps = new Steps(4, 256);

  constructor(private readonly owner: Owner) {}

  /** Rows just written (current versions in the mirror): findable now as strays, indexed soon. */
  note(rids: number[]): void {
    for (const rid of rids) {
      this.waiting.add(rid);
      this.owner.hnsw.strays.add(rid);
    }
    this.running ??= this.drain().finally(() => (this.running = null));
  }

  /** Resolves once every row noted so far is in the graph (or gone). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.waiting.size > 0 && !this.owner.closed) {
      await new Promise((resolve) => setImmediate(resolve));
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
        if (status === "ready") checkStrays(hnsw, mirror, step);
      });
    }
  }
}
