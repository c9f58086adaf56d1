import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { tasks } from "../../scheduler/tables.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import { FILL_TASK_TYPES } from "../tasks/kinds.ts";
import { vectorTables, type SyncStatus, type VectorTableRow } from "./tables.ts";

export type { VectorTableRow };
export type VectorTableChanges = Partial<Omit<VectorTableRow, "id" | "orgId" | "createdAt">>;

const scoped = (orgId: string, id: string) => and(eq(vectorTables.orgId, orgId), eq(vectorTables.id, id));

/** A new row; columns with a database default (e.g. `served_config_version`) may be left out. */
export async function insertVectorTable(db: Executor, row: typeof vectorTables.$inferInsert): Promise<void> {
  await db.insert(vectorTables).values(row);
}

export async function findVectorTable(db: Executor, orgId: string, id: string): Promise<VectorTableRow | undefined> {
  const [row] = await db.select().from(vectorTables).where(scoped(orgId, id));
  return row;
}

export async function findVectorTableByName(db: Executor, orgId: string, name: string): Promise<VectorTableRow | undefined> {
  const [row] = await db.select().from(vectorTables).where(and(eq(vectorTables.orgId, orgId), eq(vectorTables.name, name)));
  return row;
}

/** One page plus one row, so the caller can tell whether more exist; `environmentId` narrows. */
export function pageVectorTables(db: Executor, orgId: string, environmentId: string | null, page: PageRequest): Promise<VectorTableRow[]> {
  const inEnvironment = environmentId === null ? undefined : eq(vectorTables.environmentId, environmentId);
  return db
    .select()
    .from(vectorTables)
    .where(and(eq(vectorTables.orgId, orgId), inEnvironment, afterPosition(vectorTables.createdAt, vectorTables.id, page.after)))
    .orderBy(asc(vectorTables.createdAt), asc(vectorTables.id))
    .limit(page.limit + 1);
}

export async function updateVectorTableRow(db: Executor, orgId: string, id: string, changes: VectorTableChanges): Promise<void> {
  await db.update(vectorTables).set(changes).where(scoped(orgId, id));
}

/** `config_version + 1` in SQL (two racing PUTs make two versions, never one); answers the new value. */
export async function bumpConfigVersion(db: Executor, orgId: string, id: string): Promise<number> {
  const [row] = await db
    .update(vectorTables)
    .set({ configVersion: sql`${vectorTables.configVersion} + 1` })
    .where(scoped(orgId, id))
    .returning({ configVersion: vectorTables.configVersion });
  return row?.configVersion ?? 0;
}

/**
 * Moves the table to `next` only if it is in one of `from` (a compare-and-set, so two racing
 * pauses cannot both succeed); answers whether it moved.
 */
export async function moveSyncStatus(db: Executor, orgId: string, id: string, from: SyncStatus[], next: SyncStatus, updatedAt: string): Promise<boolean> {
  const rows = await db
    .update(vectorTables)
    .set({ syncStatus: next, updatedAt })
    .where(and(scoped(orgId, id), inArray(vectorTables.syncStatus, from)))
    .returning({ id: vectorTables.id });
  return rows.length > 0;
}

export async function deleteVectorTableRow(db: Executor, orgId: string, id: string): Promise<void> {
  await db.delete(vectorTables).where(scoped(orgId, id));
}

/**
 * Ends the table's unfinished tasks as failed. Their worker's next checkpoint finds the task no
 * longer running and throws (the queue fences every write by lease), so it stops; the failed
 * rows stay visible in GET /v1/tasks for 24 hours, saying why.
 */
export async function failActiveTasksOf(db: Executor, orgId: string, vectorTableId: string, reason: string, now: string): Promise<void> {
  await db
    .update(tasks)
    .set({ status: "failed", lastError: reason, lockedBy: null, lockedUntil: null, updatedAt: now, finishedAt: now })
    .where(and(eq(tasks.orgId, orgId), eq(tasks.targetId, vectorTableId), inArray(tasks.status, ["pending", "running"]), inArray(tasks.taskType, [...FILL_TASK_TYPES])));
}

export async function organizationVectorTables(db: Executor, orgId: string): Promise<VectorTableRow[]> {
  return db.select().from(vectorTables).where(eq(vectorTables.orgId, orgId));
}

export async function deleteOrganizationVectorTables(db: Executor, orgId: string): Promise<void> {
  await db.delete(vectorTables).where(eq(vectorTables.orgId, orgId));
}

type CountColumn = typeof vectorTables.environmentId | typeof vectorTables.connectionId | typeof vectorTables.embeddingProviderId;

/** How many of the organization's tables point at `value` through `column` (usage checks). */
export async function countVectorTablesBy(db: Executor, orgId: string, column: CountColumn, value: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(vectorTables).where(and(eq(vectorTables.orgId, orgId), eq(column, value)));
  return row?.n ?? 0;
}
