// Requests first: background work on the event loop (the vector store's graph insertions, stray
// sweeps, rebuilds, calibrations: vector-store/pace.ts) gives way while a request is being
// handled. Each such step holds the loop ~5 ms, and a query awaits several times on its way (key
// check, table read, provider, embedding call, search, refine read): with a step landing in front
// of each await, a query that searches in under a millisecond answered in ~15 ms at the median
// while a table was being swept. Between steps, background work now waits until no request is in
// flight, so a request waits for at most the one step already running when it arrives: measured
// over HTTP from another process during the sweep of 150k × 256 rows, p50 14.9 → 5.0 ms and p99
// 20.6 → 9.3 ms (docs/architecture.md, "Requests first").
//
// One per process, like the event loop it shares out: the HTTP app counts requests in, the
// background steps wait. The wait is capped (MAX_WAIT_MS), so under a steady stream of requests
// background work still gets a share and finishes: a backfill's graph insertions, which pace its
// writes (later.ts settle), slow down rather than stop.

/** The longest a background step waits for requests to drain before it runs anyway. */
const MAX_WAIT_MS = 25;

export class Foreground {
  private inFlight = 0;
  private waiting: (() => void)[] = [];
  private wakeQueued = false;

  /** A request's handler starts; pair with `leave()` in a `finally`. */
  enter(): void {
    this.inFlight++;
  }

  leave(): void {
    if (--this.inFlight > 0) return;
    this.inFlight = 0;
    if (this.waiting.length === 0 || this.wakeQueued) return;
    // Woken on the next turn of the loop, not here: a handler leaves before its response is
    // written, and a step woken here ran first, in the same run of microtasks. During a sweep
    // every answer waited one step (~5 ms): p50 7.7 ms in the server against a handler's 2.5.
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      if (this.inFlight > 0) return; // another request came in meanwhile: its leave wakes them
      const waiting = this.waiting;
      this.waiting = [];
      for (const wake of waiting) wake();
    });
  }

  /** Requests being handled now. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  /**
   * Between two background steps: a turn of the event loop (setImmediate, so I/O and timers run),
   * then, while requests are in flight, a wait until none is, for at most `maxWaitMs`.
   */
  async yieldTurn(maxWaitMs = MAX_WAIT_MS): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.inFlight === 0) return;
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
}

export const foreground = new Foreground();
