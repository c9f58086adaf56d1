import { hostname } from "node:os";
import type { Db } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import { isRetryable } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import type { Logger } from "../shared/log.ts";
import { issuesOf } from "../shared/validate.ts";
import { type } from "arktype";
import { DEFAULT_BACKOFF, retryDelayMs, type BackoffOptions } from "./backoff.ts";
import type { RegisteredTask, TaskCatalog, TaskContext } from "./catalog.ts";
import * as queue from "./queue.ts";
import type { DbOrTx, TaskProgress, TaskRow } from "./types.ts";

export type RunnerOptions = {
  /** Concurrent handlers in this process (VECSYNC_WORKERS). */
  workers: number;
  /** How long a claim holds without a heartbeat; a dead process's tasks are reclaimed after it. */
  leaseMs: number;
  /** Heartbeat period; a third of the lease, so two missed beats still keep it. */
  heartbeatMs: number;
  /** Idle poll period; an enqueue in this process wakes the workers sooner. */
  pollMs: number;
  backoff: BackoffOptions;
  /** After a timeout, lease loss or shutdown, how long a handler may take to return before it is abandoned. */
  graceMs: number;
};

/**
 * Lease 30 s with a heartbeat every 10 s: a dead process's task is picked up within 30 s, and a
 * busy event loop or a slow database write has two beats of slack before the lease lapses.
 * Grace 5 s: shutdown must finish within the 10 s that docs/running.md#shutdown allows, HTTP drain and DB close included.
 */
export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  workers: 2,
  leaseMs: 30_000,
  heartbeatMs: 10_000,
  pollMs: 500,
  backoff: DEFAULT_BACKOFF,
  graceMs: 5_000,
};

/** The reason a task's signal is aborted; handlers may rethrow it (e.g. `signal.throwIfAborted()`). */
export class TaskInterrupted extends Error {
  constructor(readonly kind: "shutdown" | "timeout" | "lease_lost", message: string) {
    super(message);
    this.name = "TaskInterrupted";
  }
}

type Active = { task: TaskRow; workerId: string; controller: AbortController };
type Outcome = { ok: true } | { ok: false; error: unknown } | { abandoned: true };

/** N worker loops claiming from the durable queue and running catalog handlers. */
export class TaskRunner {
  readonly #db: Db;
  readonly #catalog: TaskCatalog;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #opts: RunnerOptions;
  // host:pid first: after a crash, the restarted service recognises its dead predecessor's leases.
  readonly #instance = `${hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  #recovered: Promise<void> = Promise.resolve();
  readonly #active = new Map<string, Active>();
  readonly #wakers = new Set<() => void>();
  #loops: Promise<void>[] = [];
  #stopping = false;

  constructor(db: Db, catalog: TaskCatalog, clock: Clock, logger: Logger, opts: Partial<RunnerOptions> = {}) {
    this.#db = db;
    this.#catalog = catalog;
    this.#clock = clock;
    this.#logger = logger;
    this.#opts = { ...DEFAULT_RUNNER_OPTIONS, heartbeatMs: Math.floor((opts.leaseMs ?? DEFAULT_RUNNER_OPTIONS.leaseMs) / 3), ...opts };
  }

  get started(): boolean {
    return this.#loops.length > 0 && !this.#stopping;
  }

  start(): void {
    if (this.#loops.length) return;
    this.#stopping = false;
    this.#recovered = queue
      .expireOrphanedLeases(this.#db, hostname(), this.#clock.now(), queue.processIsAlive)
      .then((ids) => {
        if (ids.length) this.#logger.info({ tasks: ids }, "resuming tasks of a process that died");
      })
      .catch((err) => this.#logger.warn({ err }, "orphaned lease recovery failed"));
    for (let i = 0; i < this.#opts.workers; i++) this.#loops.push(this.#loop(`${this.#instance}:${i}`));
  }

  /** Makes idle workers look for work now (after an enqueue). */
  wake(): void {
    for (const wake of this.#wakers) wake();
  }

  /**
   * Stops claiming, aborts running handlers (reason "shutdown") so they checkpoint, waits for them
   * at most `graceMs`, and hands back the tasks of any that did not return so a restart resumes
   * them at once.
   */
  async stop(): Promise<void> {
    if (!this.#loops.length) return;
    this.#stopping = true;
    this.wake();
    for (const a of this.#active.values()) a.controller.abort(new TaskInterrupted("shutdown", "the service is shutting down"));
    await Promise.race([Promise.all(this.#loops), Bun.sleep(this.#opts.graceMs)]);
    for (const a of [...this.#active.values()]) {
      this.#active.delete(a.task.id);
      await this.#write(a.task, "release", () => queue.releaseLease(this.#db, a.task.id, a.workerId, this.#clock.now()));
    }
    this.#loops = [];
  }

  async #loop(loopId: string): Promise<void> {
    await this.#recovered;
    for (let claim = 1; !this.#stopping; claim++) {
      // One `locked_by` per claim, not per loop: a handler abandoned after a timeout must not pass
      // the fence if this same loop claims its task again.
      const workerId = `${loopId}:${claim}`;
      let task: TaskRow | null = null;
      try {
        task = await queue.claimNext(this.#db, { workerId, types: this.#catalog.types(), longTypes: this.#catalog.longTypes(), now: this.#clock.now(), leaseMs: this.#opts.leaseMs });
      } catch (err) {
        this.#logger.warn({ err, worker: workerId }, "task claim failed");
      }
      if (!task) {
        await this.#idle();
        continue;
      }
      if (this.#stopping) {
        await this.#write(task, "release", () => queue.releaseLease(this.#db, task.id, workerId, this.#clock.now()));
        break;
      }
      await this.#runClaimed(task, workerId);
    }
  }

  #idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.#opts.pollMs);
      this.#wakers.add(done);
    });
  }

  async #runClaimed(task: TaskRow, workerId: string): Promise<void> {
    const def = this.#catalog.get(task.taskType)!; // claimNext only returns registered types
    const log = this.#logger.child({ task_id: task.id, task_type: task.taskType, org_id: task.orgId, attempt: task.attempts });
    if (task.stalledRuns > task.maxAttempts) {
      // The last max_attempts runs all died with their process (lease expired) before saving any
      // progress: nothing left to try. Runs that saved progress reset the count (docs/api.md#tasks).
      const error = `attempt ${task.attempts - 1} stopped without finishing (its worker died); ${task.maxAttempts} of ${task.maxAttempts} runs in a row saved no progress`;
      return this.#fail(def, task, workerId, error);
    }
    const payload = def.payload(task.payload);
    if (payload instanceof type.errors) {
      const problems = issuesOf(payload).map((d) => `${d.path || "payload"} ${d.message}`).join("; ");
      return this.#fail(def, task, workerId, `invalid payload: ${problems}`);
    }
    const active: Active = { task, workerId, controller: new AbortController() };
    this.#active.set(task.id, active);
    log.info("task started");
    const outcome = await this.#invoke(def, active, payload);
    if (!this.#active.delete(task.id)) return; // stop() already handed the task back
    await this.#settle(active, outcome, log);
  }

  /** Runs the handler with heartbeat and timeout; gives up on it `graceMs` after an abort. */
  async #invoke(def: RegisteredTask, active: Active, payload: unknown): Promise<Outcome> {
    const { task, workerId, controller } = active;
    const signal = controller.signal;
    const heartbeat = setInterval(async () => {
      try {
        const kept = await queue.extendLease(this.#db, task.id, workerId, this.#clock.now(), this.#opts.leaseMs);
        if (!kept) controller.abort(new TaskInterrupted("lease_lost", "another worker took over the task"));
      } catch (err) {
        this.#logger.warn({ err, task_id: task.id }, "task heartbeat failed");
      }
    }, this.#opts.heartbeatMs);
    const timeout = setTimeout(() => controller.abort(new TaskInterrupted("timeout", `the run timed out after ${def.timeoutMs} ms`)), def.timeoutMs);
    const ctx: TaskContext<unknown> = {
      task,
      payload,
      progress: task.progress as TaskProgress,
      signal,
      checkpoint: (progress: TaskProgress, tx?: DbOrTx) => queue.saveProgress(tx ?? this.#db, task.id, workerId, progress, this.#clock.now(), this.#opts.leaseMs),
      complete: async (tx: DbOrTx) => {
        if (!(await queue.markCompleted(tx, task.id, workerId, this.#clock.now()))) throw new queue.LeaseLostError(task.id);
      },
    };
    const { promise: abandoned, resolve: abandon } = Promise.withResolvers<Outcome>();
    let graceTimer: Timer | undefined;
    const onAbort = () => (graceTimer = setTimeout(() => abandon({ abandoned: true }), this.#opts.graceMs));
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const run = def.handler(ctx).then((): Outcome => ({ ok: true }), (error: unknown): Outcome => ({ ok: false, error }));
      return await Promise.race([run, abandoned]);
    } finally {
      clearInterval(heartbeat);
      clearTimeout(timeout);
      clearTimeout(graceTimer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  async #settle(active: Active, outcome: Outcome, log: Logger): Promise<void> {
    const { task, workerId, controller } = active;
    const now = this.#clock.now();
    const reason: unknown = controller.signal.reason;
    const interrupted = reason instanceof TaskInterrupted ? reason.kind : null;
    if ("ok" in outcome && outcome.ok) {
      log.info("task completed");
      // A no-op when the handler already completed the task in its own transaction (ctx.complete).
      return this.#write(task, "complete", async () => void (await queue.markCompleted(this.#db, task.id, workerId, now)));
    }
    if (interrupted === "lease_lost" || ("error" in outcome && outcome.error instanceof queue.LeaseLostError)) {
      log.warn("task lease lost; another worker has it");
      return;
    }
    if (interrupted === "shutdown") {
      log.info("task handed back for shutdown");
      return this.#write(task, "release", () => queue.releaseLease(this.#db, task.id, workerId, now));
    }
    const error = "error" in outcome ? outcome.error : reason;
    const message = errorMessage(error);
    // Read, not taken from the claim: a checkpoint of this run may have cleared it (docs/api.md#tasks).
    const stalled = await queue.stalledRunsOf(this.#db, task.id, workerId).catch(() => task.stalledRuns);
    if (stalled === null) return; // completed in the handler's transaction, or no longer ours
    if (isRetryable(error) && stalled < task.maxAttempts) {
      const runAfter = new Date(now.getTime() + retryDelayMs(Math.max(stalled, 1), this.#opts.backoff));
      log.warn({ err: error, run_after: runAfter.toISOString() }, "task failed; will retry");
      return this.#write(task, "retry", () => queue.scheduleRetry(this.#db, task.id, workerId, message, runAfter, now));
    }
    log.error({ err: error }, "task failed");
    return this.#fail(this.#catalog.get(task.taskType)!, task, workerId, message);
  }

  /**
   * Fails the task for good and runs its type's hook in the same transaction (the hook moves what
   * the task worked on, e.g. its table to `error`), then the after-commit clean-up.
   */
  async #fail(def: RegisteredTask, task: TaskRow, workerId: string, error: string): Promise<void> {
    const failure = { task, error };
    const failed = await this.#db
      .transaction(async (tx) => {
        const ours = await queue.markFailed(tx, task.id, workerId, error, this.#clock.now());
        if (ours) await def.onFailed(tx, failure);
        return ours;
      })
      .catch((err) => {
        // Nothing committed; the lease expires and the next claim fails it again.
        this.#logger.error({ err, task_id: task.id, write: "fail" }, "task state write failed");
        return false;
      });
    if (failed) await def.afterFailed(failure).catch((err) => this.#logger.warn({ err, task_id: task.id }, "clean-up after a failed task failed"));
  }

  /** A failed bookkeeping write is logged; the lease then expires and another claim retries. */
  async #write(task: TaskRow, what: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#logger.error({ err, task_id: task.id, write: what }, "task state write failed");
    }
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
