import type { ResultSet } from "@libsql/client";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { Schema } from "../shared/validate.ts";
import type { tasks } from "./tables.ts";

/** The database or an open transaction: enqueueing and checkpoints join the caller's transaction. */
export type DbOrTx = BaseSQLiteDatabase<"async", ResultSet>;

/** A task's `task_type`. The scheduler knows no domain: the types are the kinds registered with it. */
export type TaskType = string;

export const TASK_STATUSES = ["pending", "running", "completed", "failed"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * A task type as its domain declares it (src/domains/tasks/kinds.ts): its name, the defaults of
 * new tasks (priority: lower runs first; max attempts) and the schema of its payload. Enqueueing
 * and registering both name the kind, so a payload cannot drift from what its handler validates.
 */
export type TaskKind<P = unknown> = {
  readonly taskType: TaskType;
  /** Default priority of new tasks; an enqueue call may override it. */
  readonly priority: number;
  /** Default max attempts of new tasks; an enqueue call may override it. */
  readonly maxAttempts: number;
  /** Validated before the handler sees the payload. */
  readonly payload: Schema<P>;
};

/**
 * Where a task got to. `last_processed_pk` and `rows_processed` are the task's progress fields (docs/api.md#tasks); handlers
 * resume from them after a crash or a restart (docs/api.md#tasks).
 */
export type TaskProgress = { last_processed_pk: string | null; rows_processed: number };

export const INITIAL_PROGRESS: TaskProgress = { last_processed_pk: null, rows_processed: 0 };

/** A row of the `tasks` table as drizzle reads it. */
export type TaskRow = typeof tasks.$inferSelect;
