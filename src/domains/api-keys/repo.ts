import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Executor } from "../../db/executor.ts";
import { apiKeys } from "./tables.ts";

// Named queries over api_keys; every one is scoped by organization.

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertApiKey(db: Executor, row: ApiKeyRow): Promise<void> {
  await db.insert(apiKeys).values(row);
}

/**
 * Inserts the key only while its creator holds fewer than `maxLive` unrevoked keys in the
 * organization: the count and the insert are one statement, so a burst cannot pass the cap.
 */
export async function insertApiKeyWithin(db: Db, row: ApiKeyRow, maxLive: number): Promise<boolean> {
  const live = sql`(SELECT count(*) FROM api_keys WHERE org_id = ${row.orgId} AND created_by = ${row.createdBy} AND revoked_at IS NULL)`;
  const inserted = await db.all<{ id: string }>(sql`
    INSERT INTO api_keys (id, org_id, name, key_prefix, key_hash, permission, created_by, created_at, revoked_at)
    SELECT ${row.id}, ${row.orgId}, ${row.name}, ${row.keyPrefix}, ${row.keyHash}, ${row.permission}, ${row.createdBy}, ${row.createdAt}, NULL
    WHERE ${live} < ${maxLive} RETURNING id`);
  return inserted.length === 1;
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
