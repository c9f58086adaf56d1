import { and, asc, count, eq } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import type { ConnectionStatus } from "./schemas.ts";
import { connections } from "./tables.ts";

export type ConnectionRow = typeof connections.$inferSelect;

export async function insertConnection(db: Executor, row: ConnectionRow): Promise<void> {
  await db.insert(connections).values(row);
}

export async function findConnection(db: Executor, orgId: string, id: string): Promise<ConnectionRow | undefined> {
  const [row] = await db.select().from(connections).where(and(eq(connections.orgId, orgId), eq(connections.id, id)));
  return row;
}

export async function findConnectionByName(db: Executor, orgId: string, name: string): Promise<ConnectionRow | undefined> {
  const [row] = await db.select().from(connections).where(and(eq(connections.orgId, orgId), eq(connections.name, name)));
  return row;
}

/** One page plus one row, so the caller can tell whether more exist; `environmentId` narrows. */
export function pageConnections(db: Executor, orgId: string, environmentId: string | null, page: PageRequest): Promise<ConnectionRow[]> {
  const inEnvironment = environmentId === null ? undefined : eq(connections.environmentId, environmentId);
  return db
    .select()
    .from(connections)
    .where(and(eq(connections.orgId, orgId), inEnvironment, afterPosition(connections.createdAt, connections.id, page.after)))
    .orderBy(asc(connections.createdAt), asc(connections.id))
    .limit(page.limit + 1);
}

export type ConnectionChanges = Partial<Pick<ConnectionRow, "name" | "credentials" | "status" | "lastTestedAt" | "updatedAt">>;

export async function updateConnectionRow(db: Executor, orgId: string, id: string, changes: ConnectionChanges): Promise<void> {
  await db.update(connections).set(changes).where(and(eq(connections.orgId, orgId), eq(connections.id, id)));
}

/**
 * Stores a test result only if the credentials are still those that were tested (a sealed value
 * is unique per seal, so it doubles as a version): a test that raced an update changes nothing.
 */
export async function recordTestResult(db: Executor, row: ConnectionRow, status: ConnectionStatus, testedAt: string): Promise<void> {
  await db
    .update(connections)
    .set({ status, lastTestedAt: testedAt })
    .where(and(eq(connections.orgId, row.orgId), eq(connections.id, row.id), eq(connections.credentials, row.credentials)));
}

export async function deleteConnectionRow(db: Executor, orgId: string, id: string): Promise<void> {
  await db.delete(connections).where(and(eq(connections.orgId, orgId), eq(connections.id, id)));
}

export async function countEnvironmentConnections(db: Executor, orgId: string, environmentId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(connections).where(and(eq(connections.orgId, orgId), eq(connections.environmentId, environmentId)));
  return row?.n ?? 0;
}

export async function deleteOrganizationConnections(db: Executor, orgId: string): Promise<void> {
  await db.delete(connections).where(eq(connections.orgId, orgId));
}
