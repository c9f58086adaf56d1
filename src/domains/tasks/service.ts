import type { Services } from "../../services.ts";
import type { TaskRow, TaskProgress } from "../../scheduler/types.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { notFound } from "../../shared/errors.ts";
import { findTask, listActiveAndRecent } from "./repo.ts";
import type { ListTasks, Task, TaskList } from "./schemas.ts";

/** docs/api.md#tasks: finished tasks stay in the list for a day. */
const RECENT_MS = 24 * 60 * 60 * 1000;

export function presentTask(row: TaskRow): Task {
  const progress = (row.progress ?? {}) as Partial<TaskProgress>;
  return {
    id: row.id,
    org_id: row.orgId,
    task_type: row.taskType as Task["task_type"],
    target_id: row.targetId,
    status: row.status,
    priority: row.priority,
    progress: { last_processed_pk: progress.last_processed_pk ?? null, rows_processed: progress.rows_processed ?? 0 },
    attempts: row.attempts,
    max_attempts: row.maxAttempts,
    last_error: row.lastError,
    created_at: row.createdAt,
  };
}

/** GET /v1/tasks: any key, any permission; only the key's organization. */
export async function listTasks(services: Services, actor: KeyActor, filters: ListTasks): Promise<TaskList> {
  const since = new Date(services.clock.now().getTime() - RECENT_MS);
  const rows = await listActiveAndRecent(services.database.db, actor.orgId, since, filters);
  return { data: rows.map(presentTask) };
}

/** GET /v1/tasks/{id}: another organization's task is 404, like a missing one. */
export async function getTask(services: Services, actor: KeyActor, id: string): Promise<Task> {
  const row = await findTask(services.database.db, actor.orgId, id);
  if (!row) throw notFound("Task");
  return presentTask(row);
}
