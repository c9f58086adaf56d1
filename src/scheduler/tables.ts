import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The durable task queue. Workers claim by (priority, created_at) with a lease (`locked_until`)
 * so several processes sharing one database never run a task twice at once.
 */
export const tasks = sqliteTable("tasks", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  taskType: text("task_type").notNull(),
  targetId: text("target_id").notNull(),
  status: text("status", { enum: ["pending", "running", "completed", "failed"] }).notNull(),
  priority: integer("priority").notNull(),
  payload: text("payload", { mode: "json" }).notNull(),
  progress: text("progress", { mode: "json" }).notNull(),
  attempts: integer("attempts").notNull().default(0),
  /**
   * Runs in a row that saved no progress, the one running now included (docs/api.md#tasks): the task
   * fails for good when this reaches `max_attempts`. A checkpoint that moves `rows_processed`
   * forward resets it, so a large task killed again and again keeps going as long as each run
   * gets somewhere; `attempts` still counts every run.
   */
  stalledRuns: integer("stalled_runs").notNull().default(0),
  maxAttempts: integer("max_attempts").notNull(),
  lastError: text("last_error"),
  runAfter: text("run_after").notNull(), // not claimable before this (retry back-off)
  lockedBy: text("locked_by"),
  lockedUntil: text("locked_until"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  finishedAt: text("finished_at"),
  /**
   * Tasks sharing a key never coexist unfinished: the database refuses the second (e.g. one
   * backfill per vector table, even with 50 simultaneous requests from several processes).
   */
  exclusiveKey: text("exclusive_key"),
}, (t) => [
  uniqueIndex("tasks_exclusive_active_idx").on(t.exclusiveKey).where(sql`status IN ('pending', 'running') AND exclusive_key IS NOT NULL`),
  index("tasks_claim_idx").on(t.status, t.priority, t.createdAt),
  index("tasks_org_idx").on(t.orgId, t.createdAt),
  index("tasks_target_idx").on(t.targetId, t.status),
]);
