// A generation's upkeep: the background work that keeps its index saved (checkpoints.ts),
// compact (compaction.ts) and its stray list whole (sweeper.ts), one task at a time (`track`),
// and the await-points on it (`settled`, `swept`).
import type { Client } from "@libsql/client";
import { rewriteStrays } from "./checkpoint.ts";
import type { Checkpoints } from "./checkpoints.ts";
import { buildCompacted, type CompactionHost } from "./compaction.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { LaterIndexer } from "./later.ts";
import type { GenerationState } from "./lifecycle.ts";
import type { Mutex } from "./lock.ts";
import type { StraySweeper } from "./sweeper.ts";

/** Compaction (hnsw.ts): dead keys past this share of the index, and at least this many. */
const COMPACT_DEAD_SHARE = 0.25;
const COMPACT_MIN_DEAD = 1024;

/** What upkeep reads and changes of its generation. */
export interface UpkeepHost extends CompactionHost {
  readonly collection: string;
  readonly generation: number;
  readonly indexDir: string;
  readonly state: GenerationState;
  /** The serving index: a compaction swaps it. */
  hnsw: HnswIndex;
  readonly appliedSeq: number;
  readonly lock: Mutex;
  readonly checkpoints: Checkpoints;
  readonly later: LaterIndexer;
  readonly sweeper: StraySweeper;
}

export class Upkeep {
  /** The background task under way (a checkpoint, a compaction), chained: `settled()` waits for it. */
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly host: UpkeepHost,
    private readonly report: (event: string, fields: Record<string, unknown>) => void,
  ) {}

  /** Keeps a background task so `settled()` waits for it; one after another. */
  track(work: Promise<unknown>): void {
    const previous = this.running;
    const tracked: Promise<unknown> = (previous ? previous.then(() => work) : work)
      .catch((e) => this.report("vector_store.upkeep_failed", { error: String(e) }))
      .finally(() => {
        if (this.running === tracked) this.running = null;
      });
    this.running = tracked;
  }

  /**
   * After a write (outside its lock): a checkpoint when due (restart.ts checkpointDue), or a
   * compaction when dead keys pile up. In the background, one at a time.
   */
  afterWrite(client: Client): void {
    if (this.running || this.host.state !== "ready") return;
    const work = this.compactIfDead(client) ?? (this.host.checkpoints.due ? this.host.checkpoints.run(client) : null);
    if (work) this.track(work);
  }

  /** A new complete index: saved, and swept for strays. Tracked in the same turn as it became servable, so whenReady() waits for both. */
  indexReplaced(client: Client): void {
    this.track(this.host.checkpoints.run(client));
    this.host.sweeper.owe();
    void this.host.sweeper.now();
  }

  /** The strays are whole (sweeper.ts): the description of a checkpoint of this very index lists them (checkpoint.ts). */
  straysSwept(): void {
    const { host } = this;
    // Not during a checkpoint: it writes the description once its file is durable.
    this.track(
      host.checkpoints.between(() =>
        host.lock.run(async () => {
          if (host.state !== "ready" || host.checkpoints.seq !== host.appliedSeq) return;
          rewriteStrays(host.indexDir, host.collection, host.generation, host.checkpoints.seq, host.hnsw, host.sweeper);
        }),
      ),
    );
  }

  /**
   * Dead keys cost memory and widen every search (hnsw.ts asks for k × size / live): once they
   * pass COMPACT_DEAD_SHARE of the index a compacted one is built beside it (compaction.ts) and
   * swapped in, then saved and swept. Returns the compaction, or null when none is due.
   */
  compactIfDead(client: Client): Promise<void> | null {
    const { hnsw } = this.host;
    const dead = hnsw.dead;
    if (this.host.state !== "ready" || dead < COMPACT_MIN_DEAD || dead < COMPACT_DEAD_SHARE * hnsw.size) return null;
    this.report("vector_store.index_compact", { dead, keys: hnsw.size });
    return this.compact(client);
  }

  private async compact(client: Client): Promise<void> {
    const { host } = this;
    const started = host.pace.clock.now();
    const built = await buildCompacted(host);
    if (!built) return;
    host.hnsw = built.index;
    if (built.left.length > 0) host.later.note(built.left); // found as strays at once, inserted soon
    this.report("vector_store.index_compacted", { rows: built.index.size, left: built.left.length, ms: Math.round(host.pace.clock.now() - started) });
    host.checkpoints.indexReplaced(); // the saved index is the old one: save this one
    this.indexReplaced(client);
  }

  /** Resolves when the rows waiting for the graph are in it and the background checkpoint or compaction under way (if any) is done. */
  async settled(): Promise<void> {
    // A checkpoint holds insertions while it saves: rows written meanwhile are drained after it.
    for (;;) {
      await this.host.later.idle();
      if (!this.running) return;
      await this.running;
    }
  }

  /** `settled()`, then every stray sweep due (run now rather than after the quiet spell). */
  async swept(): Promise<void> {
    await this.host.later.idle();
    while (this.running || this.host.sweeper.pending) {
      if (this.running) await this.running;
      else await this.host.sweeper.now();
    }
  }
}
