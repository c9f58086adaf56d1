import { eq } from "drizzle-orm";
import { enqueue } from "../../../src/scheduler/enqueue.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import type { TaskProgress, TaskStatus } from "../../../src/scheduler/types.ts";
import { BACKFILL, ORG_DELETION, REBACKFILL, type TaskTypeName } from "../../../src/domains/tasks/kinds.ts";
import type { TestApp } from "../../harness.ts";

const KINDS = { backfill: BACKFILL, rebackfill: REBACKFILL, org_deletion: ORG_DELETION };

/** Puts a task in a given state directly, as the scheduler would have left it. */
export async function seedTask(
  app: TestApp,
  orgId: string,
  opts: { taskType?: TaskTypeName; targetId?: string; status?: TaskStatus; finishedAt?: Date; progress?: TaskProgress; lastError?: string } = {},
) {
  // A row only: its payload is never run, so it need not match the kind's schema.
  const row = await enqueue<unknown>(app.services.database.db, KINDS[opts.taskType ?? "backfill"], {
    orgId,
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
