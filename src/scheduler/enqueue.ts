import { newId } from "../shared/ids.ts";
import { tasks } from "./tables.ts";
import { INITIAL_PROGRESS, type DbOrTx, type TaskKind, type TaskProgress, type TaskRow } from "./types.ts";

export type EnqueueInput<P = unknown> = {
  orgId: string;
  /** The vector table (or organization) the task works on. */
  targetId: string;
  payload: P;
  /** Lower runs first; defaults to the kind's priority. */
  priority?: number;
  /** Defaults to the kind's. */
  maxAttempts?: number;
  /** At most one unfinished task per key; a second enqueue fails with a UNIQUE violation (isUniqueViolation). */
  exclusiveKey?: string;
  /**
   * Where to start instead of from zero: the checkpoint a failed task of the same work left, so
   * a retry asked for by hand resumes (docs/api.md#tasks). The handler must be able to trust it.
   */
  progress?: TaskProgress;
  /** Creation time; defaults to now. Pass the service clock's time for testable timestamps. */
  now?: Date;
};

/**
 * Queues a task. Pass the caller's transaction so the task exists exactly when the change that
 * asked for it commits (e.g. an organization turned `deleting` and its `org_deletion` task).
 * Workers in any process sharing the database pick it up.
 */
export async function enqueue<P>(db: DbOrTx, kind: TaskKind<P>, input: EnqueueInput<NoInfer<P>>): Promise<TaskRow> {
  const at = (input.now ?? new Date()).toISOString();
  const [row] = await db
    .insert(tasks)
    .values({
      id: newId(),
      orgId: input.orgId,
      taskType: kind.taskType,
      targetId: input.targetId,
      status: "pending",
      priority: input.priority ?? kind.priority,
      payload: input.payload ?? {},
      progress: input.progress ?? INITIAL_PROGRESS,
      attempts: 0,
      maxAttempts: input.maxAttempts ?? kind.maxAttempts,
      runAfter: at,
      exclusiveKey: input.exclusiveKey ?? null,
      createdAt: at,
      updatedAt: at,
    })
    .returning();
  return row!;
}
