// One generation of a collection held in process: its mirror, its HNSW index and its state
// (lifecycle.ts), and the live operations on them: its load, writes applied after they commit,
// pins held by searches. Its background work: upkeep.ts (checkpoints, compaction, sweeps),
// calibration.ts. Start-up and the checkpoint cadence: restart.ts. An index in doubt is rebuilt
// in the background while searches are answered exactly (never empty or partial).
import type { Client } from "@libsql/client";
import { Calibrator } from "./calibration.ts";
import { addInSteps } from "./compaction.ts";
import { removeCheckpointFiles } from "./checkpoint.ts";
import { Checkpoints } from "./checkpoints.ts";
import { type Added, byBackLinks } from "./back-links.ts";
import { addCurrentVersions } from "./adds.ts";
import { HnswIndex } from "./hnsw.ts";
import { Mutex } from "./lock.ts";
import { Mirror, type MirrorMemory } from "./mirror.ts";
import { type GenerationState, Lifecycle } from "./lifecycle.ts";
import type { Calibration } from "./planner.ts";
import { readChangesSince } from "./reads.ts";
import { LOAD_CHECKED_ROWS, restore, uncheckedSince } from "./restart.ts";
import { BACKLOG, LaterIndexer, STREAM_BACKLOG } from "./later.ts";
import { defaultPacing, Pacer, type Pacing } from "./pace.ts";
import { Pins } from "./pins.ts";
import { checkStrays } from "./strays.ts";
import { StraySweeper } from "./sweeper.ts";
import { Upkeep } from "./upkeep.ts";
import type { GenerationRef } from "./rows.ts";
import type { CollectionStatus, IndexParams } from "./types.ts";
import type { GenerationSpec, MetadataValue, UpsertRow } from "../store-api/index.ts";

export type StoreLog = (event: string, fields: Record<string, unknown>) => void;

export class Generation implements GenerationRef {
  private readonly life: Lifecycle;
  mirror: Mirror;
  private serving!: HnswIndex;
  /** Highest change sequence applied in memory; the last checkpoint covers `checkpoints.seq`. */
  appliedSeq = 0;
  readonly sweeper: StraySweeper;
  readonly checkpoints: Checkpoints;
  readonly later = new LaterIndexer(this);
  /** Checkpoints, compaction and sweeps in the background, and the waits on them (upkeep.ts). */
  readonly upkeep: Upkeep;
  /** Background work rests while writes go on (pace.ts). */
  readonly pace: Pacer;
  readonly lock = new Mutex();
  /** The searches holding this generation (pins.ts). */
  readonly pins = new Pins();
  /** Measures filtered-search depth per selectivity band in the background (calibration.ts). */
  readonly calibrator: Calibrator;

  constructor(
    readonly collection: string,
    readonly generation: number,
    readonly spec: GenerationSpec,
    private readonly params: IndexParams,
    readonly indexDir: string,
    private readonly log: StoreLog,
    { memory = {}, pacing = defaultPacing() }: { memory?: MirrorMemory; pacing?: Pacing } = {},
  ) {
    this.life = new Lifecycle(`${collection}/${generation}`);
    this.pace = new Pacer(pacing);
    this.mirror = new Mirror(spec, { ...memory, turn: () => this.pace.yieldTurn(), now: () => pacing.clock.now() });
    this.hnsw = new HnswIndex(spec.dimensions, params);
    const report = (event: string, fields: Record<string, unknown>) => this.log(event, { collection, generation, ...fields });
    this.sweeper = new StraySweeper(this, this.pace, report);
    this.calibrator = new Calibrator(this, report);
    this.upkeep = new Upkeep(this, report);
    this.checkpoints = new Checkpoints({
      collection,
      generation,
      spec,
      indexDir,
      lock: this.lock,
      strays: this.sweeper,
      index: () => this.hnsw,
      appliedSeq: () => (this.state === "ready" ? this.appliedSeq : null),
      holding: (work) => this.later.holding(work),
      clock: pacing.clock,
    });
  }

  get state(): GenerationState {
    return this.life.state;
  }

  /** What searches and stats read: a closed generation (pinned by a search as it closed) answers from its mirror, exactly. */
  get status(): CollectionStatus {
    return this.state === "closed" ? "rebuilding" : this.state;
  }

  get closed(): boolean {
    return this.state === "closed";
  }

  reached(state: GenerationState): Promise<void> {
    return this.life.reached(state);
  }

  /** Stops its background work; searches pinned to it still answer. */
  close(): void {
    this.life.to("closed");
  }

  /** The last measurement; null until one (the planner's defaults). */
  get calibration(): Calibration | null {
    return this.calibrator.calibration;
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
    if (this.state !== "loading") this.mirror.lend(index);
  }

  /** A fresh, empty generation: nothing to load. */
  markEmptyReady(): void {
    removeCheckpointFiles(this.indexDir, this.collection, this.generation);
    this.life.to("ready");
    this.mirror.lend(this.hnsw);
  }

  /** Loads everything (restart.ts); resolves when servable (the rebuild, if any, continues in the background). */
  async load(client: Client): Promise<{ rebuild: Promise<void> | null }> {
    return this.lock.run(async () => {
      const restored = await restore(client, this, this.mirror, { indexDir: this.indexDir, params: this.params, now: () => this.pace.clock.now() });
      this.appliedSeq = restored.seq;
      if (restored.checkpoint) {
        this.hnsw = restored.checkpoint.index;
        this.checkpoints.restored(restored.checkpoint.seq);
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
        this.life.to("ready");
        this.log("vector_store.index_loaded", { collection: this.collection, generation: this.generation, rows: this.mirror.liveCount, replayed: restored.replayed.length, dead: this.hnsw.dead, strays: known ? "listed" : "sweep", ...restored.timing, codesLent: lent });
        const compaction = this.upkeep.compactIfDead(client);
        if (compaction) this.upkeep.track(compaction);
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
    this.life.to("rebuilding");
    this.hnsw = new HnswIndex(this.spec.dimensions, this.params);
    this.checkpoints.indexReplaced();
    return this.rebuild(client);
  }

  /** Adds every live mirror row missing from the index, a step at a time; then checkpoints. */
  private async rebuild(client: Client): Promise<void> {
    const started = this.pace.clock.now();
    const rids = this.mirror.liveRids();
    // Off the event loop, a few thousand rows at a time (compaction.ts addInSteps). Writes during
    // the rebuild go to this same index; `add` skips versions already placed.
    const done = await addInSteps(this.hnsw, this.mirror, rids, () => this.closed, this.pace);
    if (!done || this.closed) return;
    this.mirror.lend(this.hnsw); // an empty index lent nothing: now it holds every row
    this.life.to("ready");
    this.log("vector_store.index_rebuilt", { collection: this.collection, generation: this.generation, rows: this.hnsw.size, ms: Math.round(this.pace.clock.now() - started) });
    this.upkeep.indexReplaced(client);
  }

  /** SweepHost: the strays are whole (upkeep.ts). */
  straysSwept(): void {
    this.upkeep.straysSwept();
  }

  /** Logs a failure of background work that went on without it (later.ts). */
  failed(event: string, error: unknown): void {
    this.log(event, { collection: this.collection, generation: this.generation, error: String(error) });
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
    if (rids.length > 0) {
      this.pace.noteWrite();
      this.sweeper.noteWrite(rids.length);
    }
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

  /** Before an `indexLater` write: waits while too many rows wait for the graph (later.ts BACKLOG, STREAM_BACKLOG for a stream's). */
  indexCaughtUp(streaming: boolean): Promise<void> {
    return this.later.settle(streaming ? STREAM_BACKLOG : BACKLOG);
  }

  /** Before any other upsert: waits until the graph is free, so its rows go in at once (addNow). */
  graphFree(): Promise<void> {
    return this.later.graphFree();
  }

  /**
   * After a committed upsert batch at `seq`: mirror first, then one batched index add — or, with
   * `indexLater`, the add in background steps, the rows scored exactly meanwhile (later.ts).
   */
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
    if (this.state !== "ready") return;
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

  removeFiles(): void {
    removeCheckpointFiles(this.indexDir, this.collection, this.generation);
  }
}
