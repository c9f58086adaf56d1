import { eq } from "drizzle-orm";
import { enqueue } from "../../../src/scheduler/enqueue.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import type { TaskProgress, TaskStatus, TaskType } from "../../../src/scheduler/types.ts";
import type { TestApp } from "../../harness.ts";

/** Puts a task in a given state directly, as the scheduler would have left it. */
export async function seedTask(
  app: TestApp,
  orgId: string,
  opts: { taskType?: TaskType; targetId?: string; status?: TaskStatus; finishedAt?: Date; progress?: TaskProgress; lastError?: string } = {},
) {
  const row = await enqueue(app.services.database.db, {
    orgId,
    taskType: opts.taskType ?? "backfill",
    targetId: opts.targetId ?? "vt_target",
    payload: {},
    now: app.services.clock.now(),
  });
  const status = opts.status ?? "pending";
  const finished = status === "completed" || status === "failed";
  const changes = {
    status,
    progress: opts.progress ?? row.progress,
    lastError: opts.lastError ?? null,
    attempts: status === "pending" ? 0 : 1,
    finishedAt: finished ? (opts.finishedAt ?? app.services.clock.now()).toISOString() : null,
  };
  await app.services.database.db.update(tasks).set(changes).where(eq(tasks.id, row.id));
  return { ...row, ...changes };
}

/** A response body for assertions; its shape is what the test checks. */
export const json = (res: Response): Promise<any> => res.json();
