import { Cron } from "croner";
import type { Logger } from "../shared/log.ts";

type Job = { name: string; pattern: string; fn: () => Promise<void> | void; cron: Cron | null; inFlight: Promise<void> | null };

/**
 * Periodic jobs on croner (clean-ups now, sync ticks later). Jobs registered before or after
 * `start()` run only while started; a run never overlaps the previous one of the same job, and a
 * failure is logged, never fatal. Patterns are croner's: 5 fields, or 6 with seconds first
 * (e.g. every 15 s `*\/15 * * * * *`).
 */
export class CronJobs {
  readonly #jobs = new Map<string, Job>();
  readonly #logger: Logger;
  #started = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  every(name: string, pattern: string, fn: () => Promise<void> | void): void {
    if (this.#jobs.has(name)) throw new Error(`cron job ${name} is already registered`);
    const job: Job = { name, pattern, fn, cron: null, inFlight: null };
    // Validate the pattern now, so a typo fails at registration rather than at start.
    new Cron(pattern, { paused: true }).stop();
    this.#jobs.set(name, job);
    if (this.#started) this.#schedule(job);
  }

  names(): string[] {
    return [...this.#jobs.keys()];
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const job of this.#jobs.values()) this.#schedule(job);
  }

  /** Stops scheduling and waits (at most `waitMs`) for runs in progress. */
  async stop(waitMs: number): Promise<void> {
    this.#started = false;
    const running: Promise<void>[] = [];
    for (const job of this.#jobs.values()) {
      job.cron?.stop();
      job.cron = null;
      if (job.inFlight) running.push(job.inFlight);
    }
    if (running.length) await Promise.race([Promise.all(running), Bun.sleep(waitMs)]);
  }

  #schedule(job: Job): void {
    // No croner `name`: its registry is process-wide, and tests build several services per process.
    job.cron = new Cron(job.pattern, { protect: true }, async () => {
      job.inFlight = this.#runJob(job);
      await job.inFlight;
      job.inFlight = null;
    });
  }

  async #runJob(job: Job): Promise<void> {
    try {
      await job.fn();
    } catch (err) {
      this.#logger.error({ err, job: job.name }, "cron job failed");
    }
  }
}
