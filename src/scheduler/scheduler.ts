import type { Logger } from "../shared/log.ts";

/**
 * The in-process task scheduler's lifecycle: a polling loop that can be started, asked whether it
 * is alive (for /readyz), and stopped so running work checkpoints before exit. What it polls —
 * the durable task queue — plugs in through `tick`.
 */
export class Scheduler {
  #timer: Timer | null = null;
  #inFlight: Promise<void> | null = null;
  #stopping = false;
  readonly #tick: () => Promise<void>;
  readonly #pollMs: number;
  readonly #logger: Logger;

  constructor(opts: { tick: () => Promise<void>; pollMs: number; logger: Logger }) {
    this.#tick = opts.tick;
    this.#pollMs = opts.pollMs;
    this.#logger = opts.logger;
  }

  get running(): boolean {
    return this.#timer !== null && !this.#stopping;
  }

  start(): void {
    if (this.#timer) return;
    this.#stopping = false;
    this.#timer = setInterval(() => this.#runOnce(), this.#pollMs);
  }

  #runOnce(): void {
    if (this.#inFlight || this.#stopping) return; // one tick at a time
    this.#inFlight = this.#tick()
      .catch((err) => this.#logger.error({ err }, "scheduler tick failed"))
      .finally(() => {
        this.#inFlight = null;
      });
  }

  /** Stops polling and waits for the current tick to finish. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#inFlight;
  }
}
