// The named queries of the `vector_tables` table, whose one owner is this domain: creation,
// reads (the API's, scoped to an organization, and the engine's, by id or by kind of table) and
// deletion. Changes of state and the engine's bookkeeping are in state.ts.
import { and, asc, count, eq, inArray, isNull, type Placeholder, sql } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { preparedOn } from "../../db/prepared.ts";
import { tasks } from "../../scheduler/tables.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import { FILL_TASK_TYPES } from "../tasks/kinds.ts";
import { vectorTables, type SyncStatus, type VectorTableRow } from "./tables.ts";

export type { VectorTableRow };

const scoped = (orgId: string | Placeholder, id: string | Placeholder) => and(eq(vectorTables.orgId, orgId), eq(vectorTables.id, id));

/** A new row; columns with a database default (e.g. `served_config_version`) may be left out. */
export async function insertVectorTable(db: Executor, row: typeof vectorTables.$inferInsert): Promise<void> {
  await db.insert(vectorTables).values(row);
}

/** Every query of a table reads it: prepared once (db/prepared.ts). */
export async function findVectorTable(db: Executor, orgId: string, id: string): Promise<VectorTableRow | undefined> {
  const statement = preparedOn(db, "findVectorTable", (d) => d.select().from(vectorTables).where(scoped(sql.placeholder("orgId"), sql.placeholder("id"))).prepare());
  const [row] = await statement.all({ orgId, id });
  return row;
}

/** The engine's read: it acts on ids its tasks and ticks hold, whatever the organization. */
export async function findVectorTableById(db: Executor, id: string): Promise<VectorTableRow | undefined> {
  const statement = preparedOn(db, "findVectorTableById", (d) => d.select().from(vectorTables).where(eq(vectorTables.id, sql.placeholder("id"))).prepare());
  const [row] = await statement.all({ id });
  return row;
}

export function vectorTablesInStatus(db: Executor, statuses: SyncStatus[]): Promise<VectorTableRow[]> {
  return db.select().from(vectorTables).where(inArray(vectorTables.syncStatus, statuses));
}

export function vectorTablesBySyncMode(db: Executor, syncMode: VectorTableRow["syncMode"]): Promise<VectorTableRow[]> {
  return db.select().from(vectorTables).where(eq(vectorTables.syncMode, syncMode));
}

export function vectorTablesByMode(db: Executor, mode: VectorTableRow["mode"]): Promise<VectorTableRow[]> {
  return db.select().from(vectorTables).where(eq(vectorTables.mode, mode));
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

/** A new name only; a change of configuration is a state transition (state.ts changeConfiguration). */
export async function renameVectorTable(db: Executor, orgId: string, id: string, name: string, updatedAt: string): Promise<void> {
  await db.update(vectorTables).set({ name, updatedAt }).where(scoped(orgId, id));
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

/** Set once, when the table's platform storage is first addressed (a ref never changes, as a collection name never does). */
export async function setPlatformVectorRef(db: Executor, id: string, ref: string): Promise<void> {
  await db.update(vectorTables).set({ platformVectorRef: ref }).where(and(eq(vectorTables.id, id), isNull(vectorTables.platformVectorRef)));
}
