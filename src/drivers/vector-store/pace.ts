// How a generation's background work on the event loop (a stray sweep, the checks of deferred
// index adds, a calibration) shares it with the writes and searches a user waits for. The graph's
// insertions themselves run off the loop (compaction.ts addInSteps, later.ts).
//
// Two rules. Steps are short in *time* (Steps: rows sized from the measured cost of the last
// step, ~SLICE_MS each): every await on the write path — the source read, the embedding call,
// each libSQL statement — and every search may wait one step, so the step length is added to
// commit → queryable many times over. A first change after a backfill took 530 ms while the
// post-backfill sweep ran 128-row (~32 ms) steps between its awaits; a 1,024-row rebuild step
// held the loop ~180 ms. And while writes go on, a calibration rests between steps (Pacer), at
// most its share of the loop: it only tunes. The stray sweeps rest the same way (sweeper.ts).
// Measured by `bun run bench pipeline`. Between steps, requests being handled go first
// (shared/foreground.ts).
//
// Time comes from a StoreClock and the turns from the process's Foreground, both given to the
// store (VectorStoreOptions): tests move a fake clock instead of waiting.

import { Foreground } from "../../shared/foreground.ts";

/** Monotonic time and timers for the store's background work. */
export interface StoreClock {
  /** Milliseconds, monotonic (performance.now()). */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Calls `fn` after `ms` unless cancelled; the timer keeps no process alive. Returns the cancel. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const realClock: StoreClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

/** What a store's background work is paced by. */
export interface Pacing {
  clock: StoreClock;
  foreground: Foreground;
}

export const defaultPacing = (): Pacing => ({ clock: realClock, foreground: new Foreground() });

/** How background work rests while writes go on: at most `share` of the loop while the last write is under `quietMs` old. */
export interface Rest {
  share: number;
  quietMs: number;
}

/** A calibration's: it only tunes. */
export const CALIBRATION_REST: Rest = { share: 0.25, quietMs: 1_000 };
/** A rest ends once no write came for this many times its `quietMs` (Pacer.pauser). */
const REST_ENDS = 4;
/** Target length of one background step. */
const SLICE_MS = 5;
/**
 * The same for work whose heavy part runs off the loop (a check's searches, self-search.ts): the
 * loop holds only the gather and the reading of the answers, a small part of the step, and each
 * step costs a hand-off to a thread and back. In 5 ms steps a sweep of 100k rows took ~1.5× its
 * time on the loop.
 */
export const OFF_LOOP_SLICE_MS = 20;

/** A generation's pacing: when it was last written, and the pauses its background steps take. */
export class Pacer {
  private lastWriteAt = -Infinity;

  constructor(readonly pacing: Pacing) {}

  get clock(): StoreClock {
    return this.pacing.clock;
  }

  noteWrite(): void {
    this.lastWriteAt = this.clock.now();
  }

  /** Milliseconds since the last write. */
  get sinceWrite(): number {
    return this.clock.now() - this.lastWriteAt;
  }

  /** A turn of the loop for the foreground (shared/foreground.ts yieldTurn). */
  yieldTurn(): Promise<void> {
    return this.pacing.foreground.yieldTurn();
  }

  /**
   * A pause for between steps: a rest while writes go on (so the steps take at most
   * `rest.share` of the loop), then a turn for the foreground. The rest ends once the writes
   * have stopped (no write for REST_ENDS × `rest.quietMs`): a step's time counts its waits on a
   * loop and a thread busy with the writes, and a sweep whose first step took 1.8 s beside a
   * backfill then slept 16 s after the backfill had ended. Not at `rest.quietMs` itself: a
   * change stream past its knee pauses that long between applies, and a sweep stepping in those
   * pauses made its commit → queryable p50 at 2,000 changes/s grow (docs/performance.md).
   */
  pauser(rest: Rest): () => Promise<void> {
    let resumed = this.clock.now();
    const stopped = rest.quietMs * REST_ENDS;
    return async () => {
      let ms = this.sinceWrite < rest.quietMs ? ((this.clock.now() - resumed) * (1 - rest.share)) / rest.share : 0;
      while (ms > 0 && this.sinceWrite < stopped) {
        const piece = Math.min(ms, stopped - this.sinceWrite);
        await this.clock.sleep(piece);
        ms -= piece;
      }
      await this.yieldTurn();
      resumed = this.clock.now();
    };
  }
}

/**
 * Step sizes for work done a row at a time: as many rows as the last step's cost per row says
 * fit in `sliceMs` (SLICE_MS unless the work runs off the loop), between `min` and `max`. Starts
 * at `min` (the cost is unknown).
 */
export class Steps {
  private msPerRow = 0;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly sliceMs = SLICE_MS,
    private readonly clock: StoreClock = realClock,
  ) {}

  get size(): number {
    if (this.msPerRow <= 0) return this.min;
    return Math.max(this.min, Math.min(this.max, Math.floor(this.sliceMs / this.msPerRow)));
  }

  /** Runs one step of `rows` rows, timing it (to its end, off the loop too) for the next size. */
  async run<T>(rows: number, work: () => Promise<T>): Promise<T> {
    const started = this.clock.now();
    const result = await work();
    if (rows > 0) this.msPerRow = (this.clock.now() - started) / rows;
    return result;
  }
}
