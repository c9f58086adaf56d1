// The stray sweeps (strays.ts says what strays are): every live row searched for by its own
// vector after each load and rebuild, and after quiet spells in the writes once enough were
// written; and the rows a write left unverified (decided by their back links, back-links.ts)
// searched for in the next quiet spell, unless a sweep covers them.
//
// The sweep's state, one field (`state`):
//
//   from     to       when
//   due      running  now(): the index is ready (a new generation starts due: its fill is swept)
//   running  whole    the sweep searched for every live row: the stray list is whole
//   running  due      the sweep was abandoned (the index replaced, the generation closed)
//   running  again    a sweep is asked for while one runs (a load, a rebuild, the write budget)
//   again    due      the sweep ended: the next one starts at once
//   whole    due      a rebuild or a load that placed rows unchecked (owe), or the write budget
//
// Only `whole` lets a checkpoint record its stray list as complete (checkedAll).
import { OFF_LOOP_SLICE_MS, type Pacer, type Rest, Steps } from "./pace.ts";
import { DeeperChecks } from "./strays.ts";
import type { Mirror } from "./mirror.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { CollectionStatus } from "./types.ts";

type SweepState = "due" | "running" | "again" | "whole";

/** A sweep starts once writes have paused this long (a backfill's pages come faster). */
const SWEEP_QUIET_MS = 500;
/**
 * A sweep checks every live row, so it is not run after every quiet spell (a cdc table pauses
 * after each change: at 100k rows that was 30 s of CPU per change). Written rows are checked at
 * once or in the next quiet spell (`verifyLater`); the rows a later insert may cut off are caught
 * by a sweep due when writes since the last one reach 1/SWEEP_WRITE_SHARE of the live rows (≤ 8
 * checks per written row, amortised), or when SWEEP_COST_FACTOR × the last sweep's duration has
 * passed (≤ ~5 % of a core).
 */
const SWEEP_WRITE_SHARE = 8;
const SWEEP_COST_FACTOR = 20;
/**
 * While writes go on, a sweep that started in a pause takes at most this share of the event loop
 * (it rests between steps): under a steady change stream it is background work, not a stall of
 * every write and search behind it (a 12k-row sweep is ~4 s of CPU; a cdc table under 500
 * changes/s pauses often enough to start one every few seconds).
 */
const SWEEP_REST: Rest = { share: 0.1, quietMs: SWEEP_QUIET_MS };
/**
 * Rows left unverified (`verifyLater`) wait at most this long for a quiet spell: a steady change
 * stream may never pause, and its rows are then searched for while it goes on (at
 * SWEEP_REST). Not while a full sweep is due, which covers them: a fill's rows wait for the
 * sweep after it, as the rows its later inserts cut off do.
 */
const VERIFY_WITHIN_MS = 2_000;

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
  private state: SweepState = "due";
  private writtenSinceSweep = 0;
  private lastSweepEnd = 0;
  private lastSweepMs = 0;
  private cancelQuiet: (() => void) | null = null;
  /**
   * Rows a write took off the stray list by their back links (back-links.ts), not yet searched
   * for: a search by its own vector at the depth searches run at may still miss a row well
   * linked (right after its insertion, 22 of 100k × 768 clustered rows at ef 64, 149 of 100k ×
   * 256 random). Searched for in the next quiet spell, unless a sweep that covers them runs
   * first (a fill's); meanwhile a checkpoint lists them as strays (`unverifiedRows`).
   */
  private unverified: number[] = [];
  private unverifiedSince = 0;

  constructor(
    private readonly host: SweepHost,
    /** The generation's: its last write, its clock, the foreground's turns. */
    private readonly pace: Pacer,
    private readonly report: (event: string, fields: Record<string, unknown>) => void,
  ) {}

  /** A load or rebuild placed rows without checking them, or the write budget is spent: sweep all of them. */
  owe(): void {
    this.state = this.state === "running" || this.state === "again" ? "again" : "due";
  }

  /**
   * A load whose checkpoint listed every stray (and whose rows added since were checked): no sweep
   * is owed; the write/time budget goes on from the last full sweep's duration (`sweepMs`).
   */
  resume(sweepMs: number): void {
    this.state = "whole";
    this.lastSweepEnd = this.pace.clock.now();
    this.lastSweepMs = sweepMs;
  }

  /**
   * `strays` is as whole as a running index keeps it: no sweep owed since a load or rebuild, and
   * none due by the write budget (rows written since the last sweep may have cut earlier rows
   * off: 1M rows checked only as they were written listed 507 strays; a sweep of the built
   * graph finds 6,834). What a checkpoint may record as complete.
   */
  get checkedAll(): boolean {
    return this.state === "whole";
  }

  /** The last full sweep's duration (ms), 0 before one: the time budget's unit (noteWrite). */
  get sweepMs(): number {
    return this.lastSweepMs;
  }

  /** `rows` were written (each checked, or left to `verifyLater`; the Pacer told): sweep once the writes pause, if the budget allows. */
  noteWrite(rows: number): void {
    this.writtenSinceSweep += rows;
    const byRows = this.writtenSinceSweep * SWEEP_WRITE_SHARE >= this.host.mirror.liveCount;
    const byTime = this.writtenSinceSweep > 0 && this.pace.clock.now() - this.lastSweepEnd >= SWEEP_COST_FACTOR * this.lastSweepMs;
    if (!byRows && !byTime) return;
    this.owe();
    this.afterQuiet();
  }

  /** Rows a write took off the stray list unsearched (back-links.ts): searched for once the writes pause. */
  verifyLater(rids: number[]): void {
    if (rids.length === 0) return;
    const now = this.pace.clock.now();
    if (this.unverified.length === 0) this.unverifiedSince = now;
    for (const rid of rids) this.unverified.push(rid);
    this.pace.noteWrite();
    if (!this.due && now - this.unverifiedSince >= VERIFY_WITHIN_MS) void this.now();
    else this.afterQuiet();
  }

  /** Rows not yet searched for, which a checkpoint lists beside the strays. */
  get unverifiedRows(): readonly number[] {
    return this.unverified;
  }

  private afterQuiet(): void {
    this.cancelQuiet?.();
    this.cancelQuiet = this.pace.clock.setTimer(() => void this.now(), SWEEP_QUIET_MS);
  }

  /** Is a full sweep due (or asked for again) and not yet begun? */
  private get due(): boolean {
    return this.state === "due" || this.state === "again";
  }

  /** Is a sweep or a search for unverified rows running, or due on a ready index? */
  get pending(): boolean {
    return this.sweeping !== null || ((this.state === "due" || this.unverified.length > 0) && this.host.status === "ready" && !this.host.closed);
  }

  /** Runs sweeps until none is due, and searches for the unverified rows; resolves when done (at once when the index is not ready). */
  now(): Promise<void> {
    if (this.sweeping || this.host.closed || this.host.status !== "ready") return this.sweeping ?? Promise.resolve();
    this.sweeping = (async () => {
      while ((this.state === "due" || this.unverified.length > 0) && !this.host.closed && this.host.status === "ready") {
        const rows = this.unverified;
        this.unverified = []; // a sweep reads every live row, these among them
        if (this.state !== "due") {
          await this.check(rows);
          continue;
        }
        this.state = "running";
        this.writtenSinceSweep = 0;
        const started = this.pace.clock.now();
        const all = await this.check(this.host.mirror.liveRids());
        // owe() may have moved it to "again" while the sweep ran (TypeScript cannot see that).
        this.state = (this.state as SweepState) === "again" || !all ? "due" : "whole";
        this.lastSweepEnd = this.pace.clock.now();
        this.lastSweepMs = this.lastSweepEnd - started;
      }
      if (this.checkedAll && !this.host.closed) this.host.straysSwept();
    })()
      .catch((e) => this.report("vector_store.upkeep_failed", { error: String(e) }))
      .finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  /** Searches for these rows, a step at a time; abandoned if the index is replaced (a rebuild sweeps anew). True when it checked them all. */
  private async check(rows: ArrayLike<number>): Promise<boolean> {
    const { hnsw, mirror } = this.host;
    const rids = rows instanceof Uint32Array ? rows : Uint32Array.from(rows);
    const steps = new Steps(8, 2048, OFF_LOOP_SLICE_MS, this.pace.clock);
    const deeper = new DeeperChecks({ sliceMs: OFF_LOOP_SLICE_MS });
    const pause = this.pace.pauser(SWEEP_REST);
    for (let i = 0; i < rids.length || deeper.waiting > 0; ) {
      if (this.host.closed || this.host.hnsw !== hnsw) return false;
      if (deeper.full || i >= rids.length) await deeper.run(hnsw, mirror);
      else {
        const step = Array.from(rids.subarray(i, (i += steps.size))).filter((rid) => mirror.isLive(rid));
        await steps.run(step.length, () => deeper.checkFirst(hnsw, mirror, step));
      }
      await pause();
    }
    if (hnsw.strays.size > 0) this.report("vector_store.index_strays", { rows: hnsw.strays.size });
    return true;
  }
}
