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
// most BUSY_SHARE of the loop: it only tunes. Measured by `bun run bench pipeline`.
// Between steps, requests being handled go first (shared/foreground.ts).

import { foreground } from "../../shared/foreground.ts";

/** Writes this recent make background work rest. */
const BUSY_WRITES_MS = 1_000;
const BUSY_SHARE = 0.25;
/** Target length of one background step. */
const SLICE_MS = 5;
/**
 * The same for work whose heavy part runs off the loop (a check's searches, self-search.ts): the
 * loop holds only the gather and the reading of the answers, a small part of the step, and each
 * step costs a hand-off to a thread and back. In 5 ms steps a sweep of 100k rows took ~1.5× its
 * time on the loop.
 */
export const OFF_LOOP_SLICE_MS = 20;

export class Pacer {
  private lastWriteAt = 0;

  noteWrite(): void {
    this.lastWriteAt = performance.now();
  }

  get writing(): boolean {
    return performance.now() - this.lastWriteAt < BUSY_WRITES_MS;
  }

  /** A pause for between steps: a turn for the others, and while writes go on a rest as well. */
  pauser(): () => Promise<void> {
    let resumed = performance.now();
    return async () => {
      const worked = performance.now() - resumed;
      const rest = this.writing ? (worked * (1 - BUSY_SHARE)) / BUSY_SHARE : 0;
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      await foreground.yieldTurn();
      resumed = performance.now();
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
  ) {}

  get size(): number {
    if (this.msPerRow <= 0) return this.min;
    return Math.max(this.min, Math.min(this.max, Math.floor(this.sliceMs / this.msPerRow)));
  }

  /** Runs one step of `rows` rows, timing it (to its end, off the loop too) for the next size. */
  async run<T>(rows: number, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    if (rows > 0) this.msPerRow = (performance.now() - started) / rows;
    return result;
  }
}
