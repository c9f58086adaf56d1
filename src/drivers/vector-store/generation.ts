// One generation of a collection held in process: its mirror, its HNSW index and its state.
// Start-up: load the checkpoint (if valid), load the mirror from libSQL, replay what changed
// after the checkpoint's sequence, then check the index count against libSQL. Any doubt → the
// index is rebuilt in the background while searches are answered exactly (never empty/partial).
import type { Client } from "@libsql/client";
import { type Calibration, calibratable, calibrate, isStale } from "./calibration.ts";
import { loadCheckpoint, removeCheckpointFiles, saveCheckpoint } from "./checkpoint.ts";
import { HnswIndex } from "./hnsw.ts";
import { Mutex } from "./lock.ts";
import { GATHER_ROWS, Mirror } from "./mirror.ts";
import { pruneTombstones, readChangesSince, readRowPage, readSeq, type StoredRow } from "./reads.ts";
import type { GenerationRef } from "./rows.ts";
import type { CollectionStatus, GenerationSpec, IndexParams, MetadataValue, UpsertRow } from "./types.ts";

export type StoreLog = (event: string, fields: Record<string, unknown>) => void;

const LOAD_PAGE_ROWS = 4096;
/** Rows added per rebuild step; the event loop gets a turn between steps. */
const REBUILD_STEP_ROWS = 1024;

export class Generation implements GenerationRef {
  status: CollectionStatus = "loading";
  mirror: Mirror;
  hnsw: HnswIndex;
  /** Highest change sequence applied in memory; the checkpoint covers `checkpointSeq`. */
  appliedSeq = 0;
  checkpointSeq = -1;
  readonly lock = new Mutex();
  private pins = 0;
  private unpinned: (() => void) | null = null;
  closed = false;
  /** Measured filtered-search depth per selectivity band; null until measured (planner defaults). */
  calibration: Calibration | null = null;
  private calibrating: Promise<void> | null = null;

  constructor(
    readonly collection: string,
    readonly generation: number,
    readonly spec: GenerationSpec,
    private readonly params: IndexParams,
    private readonly indexDir: string,
    private readonly log: StoreLog,
    keepTexts = true,
  ) {
    this.mirror = new Mirror(spec, keepTexts);
    this.hnsw = new HnswIndex(spec.dimensions, params);
  }

  /** A fresh, empty generation: nothing to load. */
  markEmptyReady(): void {
    removeCheckpointFiles(this.indexDir, this.collection, this.generation);
    this.status = "ready";
  }

  pin(): void {
    this.pins++;
  }

  unpin(): void {
    if (--this.pins === 0 && this.unpinned) this.unpinned();
  }

  /** Resolves once no search holds this generation. */
  drained(): Promise<void> {
    if (this.pins === 0) return Promise.resolve();
    return new Promise((resolve) => (this.unpinned = resolve));
  }

  /** Loads everything; resolves when servable (the rebuild, if any, continues in the background). */
  async load(client: Client): Promise<{ rebuild: Promise<void> | null }> {
    return this.lock.run(async () => {
      const startSeq = await readSeq(client, this);
      const checkpoint = loadCheckpoint(this.indexDir, this.collection, this.generation, this.spec.dimensions, this.params);
      const since = checkpoint.ok ? checkpoint.meta.seq : Infinity;
      const replay: number[] = [];
      let maxRid = 0;
      for (let after = 0; ; ) {
        const page = await readRowPage(client, this, after, LOAD_PAGE_ROWS);
        if (page.length === 0) break;
        for (const row of page) {
          this.mirror.set(row.rid, row.vector, row.metadata, row.pk, row.text);
          if (row.vecSeq > since) replay.push(row.rid);
          maxRid = row.rid;
        }
        after = maxRid;
      }
      this.appliedSeq = startSeq;
      let problem = checkpoint.ok ? null : checkpoint.problem;
      if (checkpoint.ok) {
        this.hnsw = checkpoint.index;
        this.checkpointSeq = checkpoint.meta.seq;
        if (checkpoint.meta.seq > startSeq) problem = `checkpoint at seq ${checkpoint.meta.seq} is ahead of libSQL (${startSeq})`;
        else {
          const changes = await readChangesSince(client, this, checkpoint.meta.seq);
          this.hnsw.remove(changes.gone.filter((rid) => this.hnsw.contains(rid)));
          this.upsertIndex(replay);
          if (this.hnsw.size !== this.mirror.liveCount) problem = `index holds ${this.hnsw.size} vectors, libSQL ${this.mirror.liveCount}`;
        }
      }
      await this.catchUp(client);
      if (!problem) {
        this.status = "ready";
        this.log("vector_store.index_loaded", { collection: this.collection, generation: this.generation, rows: this.mirror.liveCount, replayed: replay.length });
        return { rebuild: null };
      }
      const hadCheckpoint = problem !== "no checkpoint description" || this.mirror.liveCount > 0;
      if (hadCheckpoint) this.log("vector_store.index_rebuild", { collection: this.collection, generation: this.generation, reason: problem });
      this.status = "rebuilding";
      this.hnsw = new HnswIndex(this.spec.dimensions, this.params);
      this.checkpointSeq = -1;
      return { rebuild: this.rebuild(client) };
    });
  }

  /** Adds every live mirror row missing from the index, a step at a time; then checkpoints. */
  private async rebuild(client: Client): Promise<void> {
    const started = performance.now();
    const rids = this.mirror.liveRids();
    for (let i = 0; i < rids.length && !this.closed; i += REBUILD_STEP_ROWS) {
      // Writes during the rebuild go to this same index; skip what they already placed.
      const step = Array.from(rids.subarray(i, i + REBUILD_STEP_ROWS)).filter((rid) => this.mirror.isLive(rid) && !this.hnsw.contains(rid));
      this.upsertIndex(step);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.closed) return;
    this.status = "ready";
    this.log("vector_store.index_rebuilt", { collection: this.collection, generation: this.generation, rows: this.hnsw.size, ms: Math.round(performance.now() - started) });
    await this.checkpoint(client);
  }

  /** (Re-)adds rids to the index from the mirror, in gather-sized batches (ascending: one slab each). */
  private upsertIndex(rids: number[]): void {
    const sorted = Float64Array.from(rids).sort();
    for (let i = 0; i < sorted.length; ) {
      const vectors = this.mirror.gather(sorted, i, GATHER_ROWS).slice();
      const n = vectors.length / this.spec.dimensions;
      this.hnsw.upsert(sorted.subarray(i, i + n), vectors);
      i += n;
    }
  }

  /** Applies rows changed by anyone (another process sharing the database) since appliedSeq. */
  async catchUp(client: Client): Promise<void> {
    const changes = await readChangesSince(client, this, this.appliedSeq);
    this.applyStored(changes.rows, this.appliedSeq);
    for (const rid of changes.gone) this.applyRemove(rid);
    this.appliedSeq = Math.max(this.appliedSeq, changes.seq);
  }

  private applyStored(rows: StoredRow[], since: number): void {
    const vectorChanged: number[] = [];
    for (const row of rows) {
      if (row.vecSeq > since || !this.mirror.isLive(row.rid)) {
        this.mirror.set(row.rid, row.vector, row.metadata, row.pk, row.text);
        vectorChanged.push(row.rid);
      } else this.mirror.setMetadata(row.rid, row.metadata);
    }
    this.upsertIndex(vectorChanged);
  }

  private applyRemove(rid: number): void {
    this.mirror.remove(rid);
    if (this.hnsw.contains(rid)) this.hnsw.remove([rid]);
  }

  /** After a committed upsert batch: mirror first, then one batched index add. */
  applyUpsert(rows: UpsertRow[], rids: Map<string, number>, typed: MetadataValue[][]): void {
    const order: number[] = [];
    rows.forEach((row, i) => {
      const rid = rids.get(row.pk);
      if (rid === undefined) return;
      this.mirror.set(rid, row.vector, typed[i]!, row.pk, row.text);
      order.push(rid);
    });
    this.upsertIndex([...new Set(order)]);
  }

  applyDelete(rids: number[]): void {
    for (const rid of rids) this.applyRemove(rid);
  }

  applyMetadata(rid: number, typed: MetadataValue[]): void {
    if (this.mirror.isLive(rid)) this.mirror.setMetadata(rid, typed);
  }

  /** Notes a committed sequence; a gap means another process wrote, so catch up. */
  async committed(client: Client, seq: number): Promise<void> {
    if (seq === this.appliedSeq + 1) this.appliedSeq = seq;
    else if (seq > this.appliedSeq) await this.catchUp(client);
  }

  /** Saves the index if it is complete and behind; runs under the generation's lock. */
  async checkpoint(client: Client): Promise<boolean> {
    return this.lock.run(async () => {
      if (this.status !== "ready" || this.closed || this.appliedSeq === this.checkpointSeq) return false;
      const meta = saveCheckpoint(this.indexDir, this.collection, this.generation, this.appliedSeq, this.hnsw);
      this.checkpointSeq = meta.seq;
      await pruneTombstones(client, this, meta.seq);
      return true;
    });
  }

  /** Starts a background calibration when the index is ready and the last one is missing or stale. */
  calibrateIfStale(): void {
    if (this.status !== "ready" || this.calibrating || !calibratable(this.mirror.liveCount)) return;
    if (isStale(this.calibration, this.mirror.liveCount)) void this.calibrateNow();
  }

  /** Measures now (or joins the measurement under way). A failure leaves the defaults in place. */
  calibrateNow(): Promise<void> {
    this.calibrating ??= (async () => {
      const started = performance.now();
      try {
        if (this.status !== "ready" || !calibratable(this.mirror.liveCount)) return;
        const result = await calibrate(this, () => new Promise((resolve) => setImmediate(resolve)));
        if (!result) return;
        this.calibration = result;
        this.log("vector_store.calibrated", { collection: this.collection, generation: this.generation, rows: result.liveRows, bands: result.bands, ms: Math.round(performance.now() - started) });
      } catch (e) {
        this.log("vector_store.calibration_failed", { collection: this.collection, generation: this.generation, error: String(e) });
      } finally {
        this.calibrating = null;
      }
    })();
    return this.calibrating;
  }

  removeFiles(): void {
    removeCheckpointFiles(this.indexDir, this.collection, this.generation);
  }
}
