// How a generation's background work (a rebuild, a calibration) shares the event loop with the
// writes and searches: while writes go on it takes short steps and rests between them, at most
// BUSY_SHARE of the loop. It is upkeep — a compaction's dead keys only cost memory and search
// width, searches are exact until a rebuild ends, a calibration only tunes — while a change
// stream's writes and the searches are what a user waits for (commit → queryable: measured by
// `bun run bench pipeline`, where an unpaced compaction of 18k rows held the loop ~2.3 s).

/** Writes this recent make background work rest. */
const BUSY_WRITES_MS = 1_000;
const BUSY_SHARE = 0.25;
/** Rows per rebuild step while writes go on (REBUILD_STEP_ROWS otherwise). */
export const BUSY_STEP_ROWS = 128;

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
      await new Promise((resolve) => (rest > 0 ? setTimeout(resolve, rest) : setImmediate(resolve)));
      resumed = performance.now();
    };
  }
}
