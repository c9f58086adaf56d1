import { and, asc, eq } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import { environments } from "./tables.ts";

export type EnvironmentRow = typeof environments.$inferSelect;

export async function insertEnvironment(db: Executor, row: EnvironmentRow): Promise<void> {
  await db.insert(environments).values(row);
}

export async function findEnvironment(db: Executor, orgId: string, id: string): Promise<EnvironmentRow | undefined> {
  const [row] = await db.select().from(environments).where(and(eq(environments.orgId, orgId), eq(environments.id, id)));
  return row;
}

export async function findEnvironmentByName(db: Executor, orgId: string, name: string): Promise<EnvironmentRow | undefined> {
  const [row] = await db.select().from(environments).where(and(eq(environments.orgId, orgId), eq(environments.name, name)));
  return row;
}

/** One page plus one row, so the caller can tell whether more exist. */
export function pageEnvironments(db: Executor, orgId: string, page: PageRequest): Promise<EnvironmentRow[]> {
  return db
    .select()
    .from(environments)
    .where(and(eq(environments.orgId, orgId), afterPosition(environments.createdAt, environments.id, page.after)))
    .orderBy(asc(environments.createdAt), asc(environments.id))
    .limit(page.limit + 1);
}

export async function deleteEnvironmentRow(db: Executor, orgId: string, id: string): Promise<void> {
  await db.delete(environments).where(and(eq(environments.orgId, orgId), eq(environments.id, id)));
}

export async function deleteOrganizationEnvironments(db: Executor, orgId: string): Promise<void> {
  await db.delete(environments).where(eq(environments.orgId, orgId));
}
