import type { Db } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/log.ts";
import { TaskCatalog, type TaskBinding } from "./catalog.ts";
import { CronJobs } from "./cron.ts";
import { enqueue, type EnqueueInput } from "./enqueue.ts";
import { TaskRunner, type RunnerOptions } from "./runner.ts";
import type { DbOrTx, TaskKind, TaskRow } from "./types.ts";

/**
 * The in-process scheduler's lifecycle: task workers and periodic jobs, started and stopped
 * together. `running` feeds /readyz; `stop()` is part of the SIGTERM shutdown (docs/running.md#shutdown: exit
 * within 10 s), so it is bounded by the runner's grace period plus a short wait for cron jobs.
 */
export class Scheduler {
  readonly #runner: TaskRunner;
  readonly #cron: CronJobs;
  #started = false;

  constructor(parts: { runner: TaskRunner; cron: CronJobs }) {
    this.#runner = parts.runner;
    this.#cron = parts.cron;
  }

  get running(): boolean {
    return this.#started && this.#runner.started;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#runner.start();
    this.#cron.start();
  }

  /** Stops claiming, lets running handlers checkpoint, hands back their tasks. Idempotent. */
  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    await Promise.all([this.#runner.stop(), this.#cron.stop(1_000)]);
  }
}

/** What the composition root registers handlers and periodic jobs with, and domains queue work on. */
export type TaskService = {
  /** Binds a handler to a kind; each kind once. */
  register<P>(kind: TaskKind<P>, binding: TaskBinding<P>): void;
  /**
   * Queues a task of the kind with its priority and max attempts unless given. Pass the
   * caller's transaction to make the task part of it.
   */
  enqueue<P>(db: DbOrTx, kind: TaskKind<P>, input: EnqueueInput<NoInfer<P>>): Promise<TaskRow>;
  /** A periodic job on croner, run while the scheduler runs. */
  every(name: string, pattern: string, fn: () => Promise<void> | void): void;
};

export type TaskSystemOptions = Partial<RunnerOptions>;

export function createTaskSystem(db: Db, clock: Clock, logger: Logger, opts: TaskSystemOptions = {}): { scheduler: Scheduler; tasks: TaskService } {
  const catalog = new TaskCatalog();
  const runner = new TaskRunner(db, catalog, clock, logger.child({ component: "scheduler" }), opts);
  const cron = new CronJobs(logger.child({ component: "cron" }));
  const tasks: TaskService = {
    register: (kind, binding) => catalog.register(kind, binding),
    async enqueue(tx, kind, input) {
      const row = await enqueue(tx, kind, { now: clock.now(), ...stripUndefined(input) });
      // Inside a caller's transaction the row is not visible yet; the next poll finds it then.
      runner.wake();
      return row;
    },
    every: (name, pattern, fn) => cron.every(name, pattern, fn),
  };
  return { scheduler: new Scheduler({ runner, cron }), tasks };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
