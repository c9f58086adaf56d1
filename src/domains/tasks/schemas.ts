import { type } from "arktype";
import { TASK_STATUSES } from "../../scheduler/types.ts";
import { TASK_TYPES } from "./kinds.ts";

const TaskTypeName = type.enumerated(...TASK_TYPES);
const TaskStatusName = type.enumerated(...TASK_STATUSES);

/** GET /v1/tasks filters (docs/api.md#tasks); each narrows the active-and-recent list. */
export const ListTasks = type({ "+": "reject", "status?": TaskStatusName, "task_type?": TaskTypeName, "target_id?": "string > 0" });
export type ListTasks = typeof ListTasks.infer;

export const TaskIdParam = type({ "+": "reject", task_id: "string" });

/** docs/api.md#tasks. `last_processed_pk` is null until the task has processed a row. */
export const Task = type({
  id: "string",
  org_id: "string",
  task_type: TaskTypeName,
  target_id: "string",
  status: TaskStatusName,
  priority: "number.integer",
  progress: { last_processed_pk: "string | null", rows_processed: "number.integer" },
  attempts: "number.integer",
  max_attempts: "number.integer",
  last_error: "string | null",
  created_at: "string",
});
export type Task = typeof Task.infer;

export const TaskList = type({ data: Task.array() });
export type TaskList = typeof TaskList.infer;
