// A generation's index checkpoints (checkpoint.ts writes their files): when one is due, and
// making one. Its save runs with insertions held, and starts under the generation's lock, so the
// file is the graph its stray list describes at the sequence it records. The fsync, checksum and
// record after it run beside the writes: a fill's writes and insertions had stood still meanwhile
// (a 1M-row fill makes ~50 checkpoints, whose files add up to ~17× the last one). Writes wait for
// those steps only once a quarter of the interval was written beside them (restart.ts
// rowsBesideCheckpoint), so a kill replays a bounded number of rows. One checkpoint at a time,
// start to end: each removes the files of the ones before.
import type { Client } from "@libsql/client";
import { completeCheckpoint, removeCheckpointFiles, saveCheckpointIndex } from "./checkpoint.ts";
import type { StrayState } from "./saved-strays.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mutex } from "./lock.ts";
import { pruneTombstones } from "./reads.ts";
import { recordCheckpoint } from "./registry.ts";
import { checkpointDue, rowsBesideCheckpoint } from "./restart.ts";
import type { StoreClock } from "./pace.ts";
import type { GenerationRef } from "./rows.ts";

/** What a checkpoint reads of its generation (the index object changes on a compaction). */
export interface CheckpointHost extends GenerationRef {
  readonly indexDir: string;
  readonly lock: Mutex;
  readonly strays: StrayState;
  index(): HnswIndex;
  /** The change sequence applied in memory, or null when the index is not ready (or closed). */
  appliedSeq(): number | null;
  /** Runs `work` with no insertion under way (later.ts holding). */
  holding<T>(work: () => Promise<T>): Promise<T>;
  readonly clock: StoreClock;
}

export class Checkpoints {
  /** The change sequence the last checkpoint of the serving index covers; -1 for none. */
  private saved = -1;
  /** Rows written since the last checkpoint, and when that ended (the clock's ms). */
  private written = 0;
  private at: number;
  /** The last checkpoint asked for, settled when it has ended. */
  private chain: Promise<void> = Promise.resolve();
  /** The checkpoint saved and not yet durable, and the rows written before its save. */
  private completing: { done: Promise<unknown>; written: number } | null = null;

  constructor(private readonly host: CheckpointHost) {
    this.at = host.clock.now();
  }

  get seq(): number {
    return this.saved;
  }

  /** A load served the index of the checkpoint at `seq`. */
  restored(seq: number): void {
    this.saved = seq;
  }

  /** The serving index was replaced (a rebuild, a compaction): no checkpoint holds it yet. */
  indexReplaced(): void {
    this.saved = -1;
  }

  noteWritten(rows: number): void {
    this.written += rows;
  }

  /** restart.ts checkpointDue, for the serving index. */
  get due(): boolean {
    return checkpointDue(this.written, this.host.index().size, this.host.clock.now() - this.at);
  }

  /** Saves the index if it is ready and behind; true when it did. */
  run(client: Client): Promise<boolean> {
    return this.between(() => this.once(client));
  }

  /** Runs `work` once no checkpoint is under way; none starts until it ends. */
  between<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /**
   * Resolves once a write may go ahead. A writer that never lets the event loop turn (a loop of
   * awaits on libSQL's local calls) would keep a checkpoint's last steps from ending: past a
   * quarter of the interval written since its save, writes wait for them.
   */
  async withinReplayBound(): Promise<void> {
    while (this.completing && this.written - this.completing.written >= rowsBesideCheckpoint(this.host.index().size)) await this.completing.done;
  }

  private async once(client: Client): Promise<boolean> {
    const { host } = this;
    // Insertions are held first (the one in flight ends: up to a second on a busy machine), then
    // the lock is taken only while the sequence and the stray list are read and the save starts.
    // Writes go on during the save itself (hundreds of ms at 100k rows): they touch the mirror,
    // not the graph, since insertions are held (generation.ts applyUpsert). Writes had waited
    // for the whole save and the insertion before it, and a change stream's p99 with them.
    const saved = await host.holding(async () => {
      const started = await host.lock.run(async () => {
        const seq = host.appliedSeq();
        if (seq === null || seq === this.saved) return null;
        const index = host.index();
        // saveCheckpointIndex reads the stray list before its first await: under the lock.
        return { save: saveCheckpointIndex(host.indexDir, host.collection, host.generation, seq, index, host.strays), index, written: this.written };
      });
      return started && { file: await started.save, index: started.index, written: started.written };
    });
    if (!saved) return false;
    const done = (async () => {
      try {
        const meta = await completeCheckpoint(saved.file);
        await recordCheckpoint(client, host.collection, host.generation, meta);
        removeCheckpointFiles(host.indexDir, host.collection, host.generation, meta.file);
        // Not if the index was replaced meanwhile (a compaction): its own checkpoint follows.
        if (host.index() === saved.index) {
          this.saved = meta.seq;
          this.written = Math.max(0, this.written - saved.written);
          this.at = host.clock.now();
        }
        return meta;
      } finally {
        this.completing = null;
      }
    })();
    this.completing = { done: done.catch(() => {}), written: saved.written };
    await pruneTombstones(client, host, (await done).seq);
    return true;
  }
}
