// How the event loop is shared (docs/architecture.md, "Sharing the event loop"). Three kinds of
// work take turns on it:
//
// - requests: a query or any other API call, counted in and out by the HTTP app;
// - sync: applying a source's changes to the vectors (a change stream's batch, a hash pass's
//   rows: sync/apply-keys.ts), and the document embedding and writes it waits on;
// - background: the vector store's upkeep, which only makes things cheaper or tidier later (stray
//   sweeps, deeper checks, rebuilds, compaction, calibration: vector-store/pace.ts).
//
// Requests and sync are both foreground: neither waits for the other. Keeping the vectors current
// is the product's promise: when sync waited (up to 25 ms a step) whenever a request was in
// flight, a client querying without pause held a change stream to a trickle (300 changes/s with
// four such clients: p99 1.3 s, and minutes behind at 500/s; docs/performance.md).
//
// Between its steps sync takes turns of the loop (`turn`) by share: after a turn in which the
// others ran for t ms, sync runs on for up to min(t × SYNC_SHARE, MAX_RUN_MS) before its next
// turn. One step a turn gave sync one step per turn of a loop that ran every client's next step
// in between: four clients querying without pause took most of it, and a hash pass over 100k rows
// ran 2.2-3.3× its time alone. The turn's own length is the measure, not the requests in flight:
// sync runs while the clients' next requests wait unread in their sockets, so at its turns none
// was in flight in 352 of 414. With an equal share a busy loop is divided about half and half and
// no request waits more than MAX_RUN_MS for sync; on an idle loop a turn takes microseconds, so
// every step takes one, and timers and I/O are served between steps.
//
// Background steps give way to both: between steps one waits (`yieldTurn`) while a request or a
// sync apply is in flight, up to MAX_WAIT_MS, then runs anyway. A background step is ~5 ms, so
// under steady foreground load it still gets about 5 of every 30 ms and finishes, and a request
// or a change waits for at most the one step already running when it arrives.
//
// One per process, like the event loop it shares out.

/** The longest a background step waits for the foreground to drain before it runs anyway. */
const MAX_WAIT_MS = 25;

/** Sync's time on a busy loop against the others': 1, half each. */
export const SYNC_SHARE = 1;

/** The longest sync runs on between two turns, however long the others held the loop. */
export const MAX_RUN_MS = 20;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class Foreground {
  private requests = 0;
  private syncs = 0;
  private waiting: (() => void)[] = [];
  private wakeQueued = false;
  /** When sync came back from its last turn, and how long it may run on from then. */
  private ranFrom = 0;
  private earned = 0;

  /** `now`: a monotonic clock in ms (tests give their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A request's handler starts; pair with `leave()` in a `finally`. */
  enter(): void {
    this.requests++;
  }

  leave(): void {
    this.requests = Math.max(0, this.requests - 1);
    this.wakeWhenIdle();
  }

  /** Runs sync work: background steps wait for it as for a request. */
  async syncing<T>(work: () => Promise<T>): Promise<T> {
    this.syncs++;
    try {
      return await work();
    } finally {
      this.syncs = Math.max(0, this.syncs - 1);
      this.wakeWhenIdle();
    }
  }

  /** Requests being handled or sync applied now. */
  get busy(): boolean {
    return this.requests + this.syncs > 0;
  }

  /**
   * Between two foreground steps (sync's, or a query's own): a turn of the loop, no waiting, once
   * this run has used the share its last turn earned it.
   */
  async turn(): Promise<void> {
    const start = this.now();
    if (start - this.ranFrom < this.earned) return;
    await nextTurn();
    this.ranFrom = this.now();
    this.earned = Math.min((this.ranFrom - start) * SYNC_SHARE, MAX_RUN_MS);
  }

  /**
   * Between two background steps: a turn of the event loop (setImmediate, so I/O and timers run),
   * then, while foreground work is under way, a wait until none is, for at most `maxWaitMs`.
   */
  async yieldTurn(maxWaitMs = MAX_WAIT_MS): Promise<void> {
    await nextTurn();
    if (!this.busy) return;
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting = this.waiting.filter((w) => w !== wake);
        resolve();
      }, maxWaitMs);
      this.waiting.push(wake);
    });
  }

  // Woken on the next turn of the loop, not here: a handler leaves before its response is
  // written, and a step woken here ran first, in the same run of microtasks. During a sweep
  // every answer waited one step (~5 ms): p50 7.7 ms in the server against a handler's 2.5.
  private wakeWhenIdle(): void {
    if (this.busy || this.waiting.length === 0 || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      if (this.busy) return; // more came in meanwhile: their end wakes them
      const waiting = this.waiting;
      this.waiting = [];
      for (const wake of waiting) wake();
    });
  }
}

