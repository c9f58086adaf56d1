// What `vecsync tasks` shows: the organization's active and recent tasks (GET /v1/tasks) with a
// progress bar for backfills. A task carries rows processed but not the total: that is the vector
// table's total_rows, which a fill sets to the source's row count as it starts (CONTRACT 6).
import type { ServiceClient } from "./api.ts";
import { count, progressBar, since, table, truncate } from "./render.ts";
import type { VectorTable } from "./status.ts";

export type Task = {
  id: string;
  task_type: string;
  target_id: string;
  status: string;
  progress: { last_processed_pk: string | null; rows_processed: number };
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  created_at: string;
};

export const isActive = (t: Task) => t.status === "pending" || t.status === "running";

export type TaskView = { tasks: Task[]; tables: Map<string, VectorTable> };

export async function readTasks(client: ServiceClient): Promise<TaskView> {
  const { data } = await client.get<{ data: Task[] }>("/v1/tasks");
  // Names and totals of the tables the tasks work on; one list call rather than one call per task.
  const needed = data.some((t) => t.task_type !== "org_deletion");
  const tables = needed ? await client.all<VectorTable>("/v1/vector-tables") : [];
  return { tasks: data, tables: new Map(tables.map((t) => [t.id, t])) };
}

function progressOf(task: Task, tables: TaskView["tables"]): string {
  const rows = task.progress.rows_processed;
  if (task.task_type === "org_deletion") return task.status === "completed" ? "done" : "-";
  if (task.status === "pending") return rows > 0 ? `waiting (${count(rows)} rows done)` : "waiting";
  if (task.status === "running") return progressBar(rows, tables.get(task.target_id)?.total_rows ?? 0);
  return `${count(rows)} rows`;
}

function targetOf(task: Task, tables: TaskView["tables"]): string {
  if (task.task_type === "org_deletion") return "organization";
  return truncate(tables.get(task.target_id)?.name ?? task.target_id, 32);
}

export function renderTasks(view: TaskView, nowMs: number): string[] {
  if (!view.tasks.length) return ["no tasks in the last 24 hours"];
  const lines = table(
    ["ID", "TYPE", "TARGET", "STATUS", "PROGRESS", "ATTEMPTS", "AGE"],
    view.tasks.map((t) => [t.id, t.task_type, targetOf(t, view.tables), t.status, progressOf(t, view.tables), `${t.attempts}/${t.max_attempts}`, since(t.created_at, nowMs)]),
  );
  for (const t of view.tasks) if (t.status === "failed" && t.last_error) lines.push(`  ${t.id} failed: ${t.last_error.replace(/\s+/g, " ")}`);
  return lines;
}

