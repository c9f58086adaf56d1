import type { ResultSet } from "@libsql/client";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type * as schema from "../db/schema.ts";
import type { tasks } from "./tables.ts";

/** The database or an open transaction: enqueueing and checkpoints join the caller's transaction. */
export type DbOrTx = BaseSQLiteDatabase<"async", ResultSet, typeof schema>;

/** SPEC 2.10: the task types the service knows. */
export const TASK_TYPES = ["backfill", "rebackfill", "org_deletion"] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_STATUSES = ["pending", "running", "completed", "failed"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * Defaults per type: priority from SPEC 2.10 (lower runs first), max attempts from CONTRACT 8.
 * A catalog entry or an enqueue call may override them.
 */
export const TASK_DEFAULTS: Record<TaskType, { priority: number; maxAttempts: number }> = {
  backfill: { priority: 3, maxAttempts: 3 },
  rebackfill: { priority: 3, maxAttempts: 3 },
  org_deletion: { priority: 7, maxAttempts: 5 },
};

/**
 * Where a task got to. `last_processed_pk` and `rows_processed` are SPEC 2.10's fields; handlers
 * resume from them after a crash or a restart (CONTRACT 8).
 */
export type TaskProgress = { last_processed_pk: string | null; rows_processed: number };

export const INITIAL_PROGRESS: TaskProgress = { last_processed_pk: null, rows_processed: 0 };

/** A row of the `tasks` table as drizzle reads it. */
export type TaskRow = typeof tasks.$inferSelect;
