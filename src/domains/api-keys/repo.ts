import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { apiKeys } from "./tables.ts";

// Named queries over api_keys; every one is scoped by organization.

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertApiKey(db: Executor, row: ApiKeyRow): Promise<void> {
  await db.insert(apiKeys).values(row);
}

/**
 * The organization's keys, or only those `createdBy` made; revoked keys included (docs/api.md#api-keys).
 * Oldest first; keys made in the same millisecond in the order they were made (rowid), not by their random ids.
 */
export function listApiKeys(db: Executor, orgId: string, createdBy: string | null): Promise<ApiKeyRow[]> {
  const scope = createdBy === null ? eq(apiKeys.orgId, orgId) : and(eq(apiKeys.orgId, orgId), eq(apiKeys.createdBy, createdBy));
  return db.select().from(apiKeys).where(scope).orderBy(asc(apiKeys.createdAt), sql`rowid`);
}

export async function findApiKey(db: Executor, orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.select().from(apiKeys).where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, keyId)));
  return row;
}

export async function revokeApiKey(db: Executor, orgId: string, keyId: string, at: string): Promise<void> {
  await db.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
}

/** A member removed or leaving loses every key they made in that organization (docs/api.md#members). */
export async function revokeMemberApiKeys(db: Executor, orgId: string, userId: string, at: string): Promise<void> {
  await db.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.createdBy, userId), isNull(apiKeys.revokedAt)));
}

/** Organization deletion cuts every key off at once (docs/api.md#organizations). */
export async function revokeOrganizationApiKeys(db: Executor, orgId: string, at: string): Promise<void> {
  await db.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt)));
}

export async function deleteOrganizationApiKeys(db: Executor, orgId: string): Promise<void> {
  await db.delete(apiKeys).where(eq(apiKeys.orgId, orgId));
}
