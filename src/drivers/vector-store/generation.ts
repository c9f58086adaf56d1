// One generation of a collection held in process: its mirror, its HNSW index and its state, and
// the live operations on them: writes applied after they commit, pins held by searches, and upkeep
// in the background (checkpoints by rows written (checkpoints.ts), compaction of dead keys
// (hnsw.ts), stray sweeps (strays.ts), calibration). Start-up and the checkpoint cadence live in
// restart.ts. An index in
// doubt is rebuilt in the background while searches are answered exactly (never empty/partial);
// a compaction builds beside the serving index (compaction.ts).
import type { Client } from "@libsql/client";
import { calibratable, calibrate, isStale } from "./calibration.ts";
import { addInSteps, buildCompacted } from "./compaction.ts";
import { removeCheckpointFiles, rewriteStrays } from "./checkpoint.ts";
import { Checkpoints } from "./checkpoints.ts";
import { type Added, byBackLinks } from "./back-links.ts";
import { addCurrentVersions, HnswIndex } from "./hnsw.ts";
import { Mutex } from "./lock.ts";
import { Mirror, type MirrorMemory } from "./mirror.ts";
import type { Calibration } from "./planner.ts";
import { readChangesSince } from "./reads.ts";
import { LOAD_CHECKED_ROWS, restore, uncheckedSince } from "./restart.ts";
import { BACKLOG, LaterIndexer, STREAM_BACKLOG } from "./later.ts";
import { Pacer } from "./pace.ts";
import { Pins } from "./pins.ts";
import { checkStrays } from "./strays.ts";
import { StraySweeper } from "./sweeper.ts";
import type { GenerationRef } from "./rows.ts";
import type { CollectionStatus, GenerationSpec, IndexParams, MetadataValue, UpsertRow } from "./types.ts";

export type StoreLog = (event: string, fields: Record<string, unknown>) => void;

/** Compaction (hnsw.ts): dead keys past this share of the index, and at least this many. */
const COMPACT_DEAD_SHARE = 0.25;
const COMPACT_MIN_DEAD = 1024;

export class Generation implements GenerationRef {
  status: CollectionStatus = "loading";
  mirror: Mirror;
  private serving!: HnswIndex;
  /** Highest change sequence applied in memory; the last checkpoint covers `checkpoints.seq`. */
  appliedSeq = 0;
  private upkeep: Promise<unknown> | null = null;
  private readonly sweeper: StraySweeper;
  readonly checkpoints: Checkpoints;
  private readonly later = new LaterIndexer(this);
  /** Background work rests while writes go on (pace.ts). */
  private readonly pace = new Pacer();
  readonly lock = new Mutex();
  /** The searches holding this generation (pins.ts). */
  readonly pins = new Pins();
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
    memory: MirrorMemory = {},
  ) {
    this.mirror = new Mirror(spec, memory);
    this.hnsw = new HnswIndex(spec.dimensions, params);
    this.sweeper = new StraySweeper(this, (event, fields) => this.log(event, { collection, generation, ...fields }));
    this.checkpoints = new Checkpoints({
      collection,
      generation,
      spec,
      indexDir,
      lock: this.lock,
      strays: this.sweeper,
      index: () => this.hnsw,
      appliedSeq: () => (this.status === "ready" && !this.closed ? this.appliedSeq : null),
      holding: (work) => this.later.holding(work),
    });
  }

  /** The change sequence the last checkpoint covers (stats.ts). */
  get checkpointSeq(): number {
    return this.checkpoints.seq;
  }

  get hnsw(): HnswIndex {
    return this.serving;
  }

  /**
   * Every index served from lends the compact mirror its codes where it can (mirror.ts lend). Not
   * while loading: the load lends from the checkpoint's index as it reads (restart.ts readMirror).
   */
  set hnsw(index: HnswIndex) {
    this.serving = index;
    if (this.status !== "loading") this.mirror.lend(index);
  }

  /** A fresh, empty generation: nothing to load. */
  markEmptyReady(): void {
    removeCheckpointFiles(this.indexDir, this.collection, this.generation);
    this.sweeper.startEmpty();
    this.status = "ready";
    this.mirror.lend(this.hnsw);
  }

  /** Loads everything (restart.ts); resolves when servable (the rebuild, if any, continues in the background). */
  async load(client: Client): Promise<{ rebuild: Promise<void> | null }> {
    return this.lock.run(async () => {
      const restored = await restore(client, this, this.mirror, { indexDir: this.indexDir, params: this.params });
      this.appliedSeq = restored.seq;
      if (restored.checkpoint) {
        this.hnsw = restored.checkpoint.index;
        this.checkpoints.seq = restored.checkpoint.seq;
      }
      await this.catchUp(client);
      const problem = restored.problem;
      if (!problem) {
        // Strays listed in full when saved: only rows the file lacked need a check. Else every
        // row is swept once ready.
        const unchecked = restored.checkpoint?.straysChecked ? uncheckedSince(this.mirror, restored.checkpoint.seq, restored.replayed) : null;
        const known = unchecked !== null && unchecked.length <= LOAD_CHECKED_ROWS;
        if (known) await checkStrays(this.hnsw, this.mirror, unchecked);
        const lent = this.mirror.lend(this.hnsw); // mostly lent while the rows were read (restart.ts readMirror)
        this.status = "ready";
        this.log("vector_store.index_loaded", { collection: this.collection, generation: this.generation, rows: this.mirror.liveCount, replayed: restored.replayed.length, dead: this.hnsw.dead, strays: known ? "listed" : "sweep", ...restored.timing, codesLent: lent });
        const compaction = this.compactIfDead(client);
        if (compaction) this.track(compaction);
        else if (known) this.sweeper.resume(restored.checkpoint!.sweepMs);
        else {
          this.sweeper.owe();
          void this.sweeper.now();
        }
        return { rebuild: compaction };
      }
      const hadCheckpoint = problem !== "no checkpoint description" || this.mirror.liveCount > 0;
      if (hadCheckpoint) this.log("vector_store.index_rebuild", { collection: this.collection, generation: this.generation, reason: problem });
      return { rebuild: this.startRebuild(client) };
    });
  }

  /** Serves exactly while a fresh index is built from the mirror in the background. */
  private startRebuild(client: Client): Promise<void> {
    this.status = "rebuilding";
    this.hnsw = new HnswIndex(this.spec.dimensions, this.params);
    this.checkpoints.seq = -1;
    return this.rebuild(client);
  }

  /** Adds every live mirror row missing from the index, a step at a time; then checkpoints. */
  private async rebuild(client: Client): Promise<void> {
    const started = performance.now();
    const rids = this.mirror.liveRids();
    // Off the event loop, a few thousand rows at a time (compaction.ts addInSteps). Writes during
    // the rebuild go to this same index; `add` skips versions already placed.
    const done = await addInSteps(this.hnsw, this.mirror, rids, () => this.closed);
    if (!done || this.closed) return;
    this.mirror.lend(this.hnsw); // an empty index lent nothing: now it holds every row
    this.status = "ready";
    this.log("vector_store.index_rebuilt", { collection: this.collection, generation: this.generation, rows: this.hnsw.size, ms: Math.round(performance.now() - started) });
    this.indexReplaced(client);
  }

  /** A new complete index: saved, and swept for strays. Tracked in the same turn as it became servable, so whenReady() waits for both. */
  private indexReplaced(client: Client): void {
    this.track(this.checkpoint(client));
    this.sweeper.owe();
    void this.sweeper.now();
  }

  /** SweepHost: the strays are whole; the description of a checkpoint of this very index lists them (checkpoint.ts). */
  straysSwept(): void {
    // Not during a checkpoint: it writes the description once its file is durable.
    this.track(
      this.checkpoints.between(() =>
        this.lock.run(async () => {
          if (this.closed || this.status !== "ready" || this.checkpoints.seq !== this.appliedSeq) return;
          rewriteStrays(this.indexDir, this.collection, this.generation, this.checkpoints.seq, this.hnsw, this.sweeper);
        }),
      ),
    );
  }

  /** Logs a failure of background work that went on without it (later.ts). */
  failed(event: string, error: unknown): void {
    this.log(event, { collection: this.collection, generation: this.generation, error: String(error) });
  }

  /** Keeps a background task in `upkeep` so `settled()` waits for it. */
  private track(work: Promise<unknown>): void {
    const previous = this.upkeep;
    const tracked: Promise<unknown> = (previous ? previous.then(() => work) : work)
      .catch((e) => this.log("vector_store.upkeep_failed", { collection: this.collection, generation: this.generation, error: String(e) }))
      .finally(() => {
        if (this.upkeep === tracked) this.upkeep = null;
      });
    this.upkeep = tracked;
  }

  /**
   * Dead keys cost memory and widen every search (hnsw.ts asks for k × size / live): once they
   * pass COMPACT_DEAD_SHARE of the index a compacted one is built beside it (compaction.ts) and
   * swapped in, then saved and swept. Returns the compaction, or null when none is due.
   */
  compactIfDead(client: Client): Promise<void> | null {
    const dead = this.hnsw.dead;
    if (this.status !== "ready" || this.closed || dead < COMPACT_MIN_DEAD || dead < COMPACT_DEAD_SHARE * this.hnsw.size) return null;
    this.log("vector_store.index_compact", { collection: this.collection, generation: this.generation, dead, keys: this.hnsw.size });
    return this.compact(client);
  }

  private async compact(client: Client): Promise<void> {
    const started = performance.now();
    const built = await buildCompacted(this);
    if (!built) return;
    this.hnsw = built.index;
    if (built.left.length > 0) this.later.note(built.left); // found as strays at once, inserted soon
    this.log("vector_store.index_compacted", { collection: this.collection, generation: this.generation, rows: built.index.size, left: built.left.length, ms: Math.round(performance.now() - started) });
    this.checkpoints.seq = -1; // the saved index is the old one: save this one
    this.indexReplaced(client);
  }

  /** Applies rows changed by anyone (another process sharing the database) since appliedSeq. */
  async catchUp(client: Client): Promise<void> {
    const changes = await readChangesSince(client, this, this.appliedSeq);
    const changed = new Set(changes.rows.filter((row) => !this.mirror.isCurrent(row.rid, row.vecSeq % 2 ** 32)));
    const rids = [...changed].map((row) => row.rid);
    this.retireVersions(rids);
    for (const row of changes.rows) {
      if (changed.has(row)) this.mirror.set(row.rid, row.vector, row.metadata, row.pk, row.text, row.vecSeq);
      else this.mirror.setMetadata(row.rid, row.metadata);
    }
    this.addNow(rids);
    if (rids.length > 0) this.sweeper.noteWrite(rids.length);
    this.applyDelete(changes.gone);
    this.appliedSeq = Math.max(this.appliedSeq, changes.seq);
  }

  /** Counts as dead the indexed current versions of rows about to be replaced or deleted. */
  private retireVersions(rids: number[]): void {
    for (const rid of rids) this.hnsw.strays.delete(rid);
    const live = rids.filter((rid) => this.mirror.isLive(rid));
    const present = this.hnsw.has(live, live.map((rid) => this.mirror.versionOf(rid)));
    this.hnsw.dead += present.filter(Boolean).length;
  }

  /**
   * After a committed upsert batch at `seq`: mirror first, then one batched index add — or, with
   * `indexLater`, the add in background steps, the rows scored exactly meanwhile (later.ts).
   */
  /** Before an `indexLater` write: waits while too many rows wait for the graph (later.ts BACKLOG, STREAM_BACKLOG for a stream's). */
  indexCaughtUp(streaming: boolean): Promise<void> {
    return this.later.settle(streaming ? STREAM_BACKLOG : BACKLOG);
  }

  /** Before any other upsert: waits until the graph is free, so its rows go in at once (addNow). */
  graphFree(): Promise<void> {
    return this.later.graphFree();
  }

  applyUpsert(rows: UpsertRow[], rids: Map<string, number>, typed: MetadataValue[][], seq: number, indexLater = false): void {
    const order = [...new Set(rows.map((row) => rids.get(row.pk)).filter((rid) => rid !== undefined))];
    this.pace.noteWrite();
    this.retireVersions(order);
    const hadFloats = this.mirror.hasFloats;
    rows.forEach((row, i) => {
      const rid = rids.get(row.pk);
      if (rid !== undefined) this.mirror.set(rid, row.vector, typed[i]!, row.pk, row.text, seq);
    });
    // Turned compact: the index lends the codes it holds.
    if (hadFloats && !this.mirror.hasFloats) this.mirror.lend(this.hnsw);
    if (indexLater) this.later.note(order);
    else this.addNow(order);
    this.checkpoints.noteWritten(order.length);
    this.sweeper.noteWrite(order.length);
  }

  /**
   * Adds rows to the graph at once, or, while the graph is busy (an insertion off the loop, a
   * checkpoint's save), notes them for the later indexer: an add now would wait on the graph's
   * lock, and the event loop with it. Noted rows are found as strays meanwhile (later.ts). An
   * upsert waits for the graph to be free before it writes (graphFree), so this is the rare case
   * of one starting in between, and of changes caught up from another process.
   */
  private addNow(rids: number[]): void {
    if (this.later.graphBusy) this.later.note(rids);
    else this.checkAdded(addCurrentVersions(this.hnsw, this.mirror, rids, true));
  }

  /** Rows a write just added: those with few back links searched for soon (later.ts), the others once the writes pause (back-links.ts). */
  private checkAdded(added: Added): void {
    if (this.status !== "ready") return;
    const { now, later } = byBackLinks(this.hnsw, this.mirror, added);
    this.later.checkSoon(now);
    this.verifyLater(later);
  }

  /** Rows taken off the stray list by their back links (later.ts too): searched for in the next quiet spell. */
  verifyLater(rids: number[]): void {
    this.sweeper.verifyLater(rids);
  }

  applyDelete(rids: number[]): void {
    this.retireVersions(rids);
    for (const rid of rids) this.mirror.remove(rid);
    // No sweep: keys are never removed from the graph (hnsw.ts), so a delete cuts no path.
    this.checkpoints.noteWritten(rids.length);
  }

  applyMetadata(rid: number, typed: MetadataValue[]): void {
    if (this.mirror.isLive(rid)) this.mirror.setMetadata(rid, typed);
  }

  /** Notes a committed sequence; a gap means another process wrote, so catch up. */
  async committed(client: Client, seq: number): Promise<void> {
    if (seq === this.appliedSeq + 1) this.appliedSeq = seq;
    else if (seq > this.appliedSeq) await this.catchUp(client);
  }

  /**
   * After a write (outside its lock): a checkpoint when due (restart.ts checkpointDue), or a
   * compaction when dead keys pile up. In the background, one at a time.
   */
  afterWrite(client: Client): void {
    if (this.upkeep || this.status !== "ready" || this.closed) return;
    const work = this.compactIfDead(client) ?? (this.checkpoints.due ? this.checkpoint(client) : null);
    if (work) this.track(work);
  }

  /** Resolves when the rows waiting for the graph are in it and the background checkpoint or compaction under way (if any) is done. */
  async settled(): Promise<void> {
    // A checkpoint holds insertions while it saves: rows written meanwhile are drained after it.
    for (;;) {
      await this.later.idle();
      if (!this.upkeep) return;
      await this.upkeep;
    }
  }

  /** `settled()`, then every stray sweep due (run now rather than after the quiet spell). */
  async swept(): Promise<void> {
    await this.later.idle();
    while (this.upkeep || this.sweeper.pending) {
      if (this.upkeep) await this.upkeep;
      else await this.sweeper.now();
    }
  }

  /** Saves the index if it is complete and behind (checkpoints.ts). */
  checkpoint(client: Client): Promise<boolean> {
    return this.checkpoints.run(client);
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
        const target = { mirror: this.mirror, index: this.hnsw, spec: this.spec };
        const result = await calibrate(target, this.pace.pauser(), () => this.closed);
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
