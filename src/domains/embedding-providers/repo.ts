import { and, asc, count, eq, type Placeholder, sql } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { preparedOn } from "../../db/prepared.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import { embeddingProviders } from "./tables.ts";

export type ProviderRow = typeof embeddingProviders.$inferSelect;
export type ProviderPatch = Partial<Pick<ProviderRow, "name" | "apiKeySealed" | "defaultModel" | "baseUrl">> & { updatedAt: string };

const scoped = (orgId: string | Placeholder, id: string | Placeholder) => and(eq(embeddingProviders.orgId, orgId), eq(embeddingProviders.id, id));

export async function insertProvider(db: Executor, row: ProviderRow): Promise<void> {
  await db.insert(embeddingProviders).values(row);
}

/** Every query embeds through its table's provider: prepared once (db/prepared.ts). */
export async function findProvider(db: Executor, orgId: string, id: string): Promise<ProviderRow | undefined> {
  const statement = preparedOn(db, "findProvider", (d) => d.select().from(embeddingProviders).where(scoped(sql.placeholder("orgId"), sql.placeholder("id"))).prepare());
  const [row] = await statement.all({ orgId, id });
  return row;
}

export async function findProviderByName(db: Executor, orgId: string, name: string): Promise<ProviderRow | undefined> {
  const [row] = await db.select().from(embeddingProviders).where(and(eq(embeddingProviders.orgId, orgId), eq(embeddingProviders.name, name)));
  return row;
}

/** One page plus one row; `environmentId` narrows the list to one environment when given. */
export function pageProviders(db: Executor, orgId: string, environmentId: string | null, page: PageRequest): Promise<ProviderRow[]> {
  return db
    .select()
    .from(embeddingProviders)
    .where(
      and(
        eq(embeddingProviders.orgId, orgId),
        environmentId === null ? undefined : eq(embeddingProviders.environmentId, environmentId),
        afterPosition(embeddingProviders.createdAt, embeddingProviders.id, page.after),
      ),
    )
    .orderBy(asc(embeddingProviders.createdAt), asc(embeddingProviders.id))
    .limit(page.limit + 1);
}

export async function updateProviderRow(db: Executor, orgId: string, id: string, patch: ProviderPatch): Promise<void> {
  await db.update(embeddingProviders).set(patch).where(scoped(orgId, id));
}

export async function deleteProviderRow(db: Executor, orgId: string, id: string): Promise<void> {
  await db.delete(embeddingProviders).where(scoped(orgId, id));
}

export async function countProvidersInEnvironment(db: Executor, orgId: string, environmentId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(embeddingProviders)
    .where(and(eq(embeddingProviders.orgId, orgId), eq(embeddingProviders.environmentId, environmentId)));
  return row?.n ?? 0;
}

export async function deleteOrganizationProviders(db: Executor, orgId: string): Promise<void> {
  await db.delete(embeddingProviders).where(eq(embeddingProviders.orgId, orgId));
}
