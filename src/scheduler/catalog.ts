import type { Schema } from "../shared/validate.ts";
import type { DbOrTx, TaskKind, TaskProgress, TaskRow, TaskType } from "./types.ts";

/** What a handler gets. The scheduler knows no domain: handlers close over the services they need. */
export type TaskContext<P> = {
  task: TaskRow;
  /** The payload, validated against the definition's schema. */
  payload: P;
  /** Where the previous run got to; resume from here, never from zero (docs/api.md#tasks). */
  progress: TaskProgress;
  /**
   * Records progress and extends the lease. Pass the transaction that wrote the work it covers so
   * both commit together; throws if another worker took the task over (the transaction then
   * rolls back).
   */
  checkpoint(progress: TaskProgress, tx?: DbOrTx): Promise<void>;
  /**
   * Marks the task completed inside the caller's transaction, so the result the handler writes
   * (e.g. its table turning `synced`) and the task's `completed` commit together: no reader sees
   * one without the other. Fenced like `checkpoint`: throws if another worker took the task over.
   * A handler that never calls it is completed by the runner when it returns.
   */
  complete(tx: DbOrTx): Promise<void>;
  /**
   * Aborted on shutdown (reason "shutdown": checkpoint and return or throw; the task is handed back
   * without using up an attempt), on timeout, or when the lease was lost. Check it between batches.
   */
  signal: AbortSignal;
};

/** How a process runs tasks of one kind: the handler bound to it, its time limit and failure hooks. */
export type TaskBinding<P = unknown> = {
  /** One run's limit; the signal aborts then and the run counts as a failed attempt. */
  timeoutMs: number;
  /**
   * Runs for hours (a fill). While other organizations have tasks waiting, an organization runs
   * at most one long task at a time (fair share: the header of queue.ts).
   */
  long?: boolean;
  handler(ctx: TaskContext<P>): Promise<void>;
  /**
   * Runs in the transaction that marks a task of this type failed for good, by any path: the
   * handler's last failure, an invalid payload, or the runner finding that runs keep dying with
   * their process (then no handler runs at all). Domains move what the task worked on (e.g. its
   * table to `error`) here, so nothing is left waiting for a task that will never run again.
   */
  onFailed?(tx: DbOrTx, failure: TaskFailure): Promise<void>;
  /** After that transaction committed: clean-up outside the database (files). Best effort. */
  afterFailed?(failure: TaskFailure): Promise<void>;
};

export type TaskFailure = { task: TaskRow; error: string };

/** A kind and its binding, the hooks filled in, as the runner uses it. */
export type RegisteredTask = {
  taskType: TaskType;
  timeoutMs: number;
  long: boolean;
  payload: TaskKind["payload"];
  handler(ctx: TaskContext<unknown>): Promise<void>;
  onFailed(tx: DbOrTx, failure: TaskFailure): Promise<void>;
  afterFailed(failure: TaskFailure): Promise<void>;
};

const nothing = async () => {};

/** Where the composition root binds handlers to kinds; workers only claim the types registered here. */
export class TaskCatalog {
  readonly #entries = new Map<TaskType, RegisteredTask>();

  register<P>(kind: TaskKind<P>, binding: TaskBinding<P>): void {
    if (this.#entries.has(kind.taskType)) throw new Error(`task type ${kind.taskType} is already registered`);
    this.#entries.set(kind.taskType, {
      taskType: kind.taskType,
      timeoutMs: binding.timeoutMs,
      long: binding.long ?? false,
      payload: kind.payload,
      // The payload is validated against kind.payload before the handler sees it.
      handler: binding.handler as (ctx: TaskContext<unknown>) => Promise<void>,
      onFailed: binding.onFailed ?? nothing,
      afterFailed: binding.afterFailed ?? nothing,
    });
  }

  get(taskType: TaskType): RegisteredTask | undefined {
    return this.#entries.get(taskType);
  }

  types(): TaskType[] {
    return [...this.#entries.keys()];
  }

  /** The types bound as long: the claim shares them fairly between organizations. */
  longTypes(): TaskType[] {
    return [...this.#entries.values()].filter((e) => e.long).map((e) => e.taskType);
  }
}
