import type { Services } from "../../services.ts";
import type { KeyActor, Permission } from "../../shared/actor.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { generateApiKey, hashApiKey, keyPrefixOf } from "./keys.ts";
import { isManager, requireWriteAccess } from "../../shared/authz.ts";
import type { Executor } from "../../db/executor.ts";
import { findApiKey, insertApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from "./repo.ts";
import type { ApiKey, CreateApiKey } from "./schemas.ts";

export function presentApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    org_id: row.orgId,
    name: row.name,
    key_prefix: row.keyPrefix,
    permission: row.permission,
    created_by: row.createdBy,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
  };
}

export type IssuedApiKey = { raw: string; row: ApiKeyRow };

/**
 * Mints a key for a member and stores only its hash. Runs inside the caller's transaction so
 * organization creation and invitation acceptance hand out their first key atomically.
 */
export async function issueApiKey(db: Executor, input: { orgId: string; userId: string; name: string; permission: Permission; now: Date }): Promise<IssuedApiKey> {
  const raw = generateApiKey();
  const row: ApiKeyRow = {
    id: newId(),
    orgId: input.orgId,
    name: input.name,
    keyPrefix: keyPrefixOf(raw),
    keyHash: hashApiKey(raw),
    permission: input.permission,
    createdBy: input.userId,
    createdAt: input.now.toISOString(),
    revokedAt: null,
  };
  await insertApiKey(db, row);
  return { raw, row };
}

/** POST /v1/api-keys: any role, permission `full`; the raw key is in this answer only. */
export async function createApiKey(services: Services, actor: KeyActor, input: CreateApiKey): Promise<{ key: string; api_key: ApiKey }> {
  requireWriteAccess(actor);
  const { raw, row } = await issueApiKey(services.database.db, {
    orgId: actor.orgId,
    userId: actor.userId,
    name: input.name,
    permission: input.permission ?? "full",
    now: services.clock.now(),
  });
  return { key: raw, api_key: presentApiKey(row) };
}

/** GET /v1/api-keys: owners and admins see every key of the organization, members their own. */
export async function listVisibleApiKeys(services: Services, actor: KeyActor): Promise<{ data: ApiKey[] }> {
  const rows = await listApiKeys(services.database.db, actor.orgId, isManager(actor.role) ? null : actor.userId);
  return { data: rows.map(presentApiKey) };
}

/**
 * DELETE /v1/api-keys/{key_id}: owners and admins revoke any key of the organization, a member
 * only their own (403). Revoking an already revoked key succeeds and keeps the first revoked_at.
 */
export async function revokeVisibleApiKey(services: Services, actor: KeyActor, keyId: string): Promise<void> {
  requireWriteAccess(actor);
  const db = services.database.db;
  const key = await findApiKey(db, actor.orgId, keyId);
  if (!key) throw notFound("API key");
  if (!isManager(actor.role) && key.createdBy !== actor.userId) {
    throw new AppError("insufficient_role", "A member may only revoke their own API keys");
  }
  await revokeApiKey(db, actor.orgId, keyId, services.clock.now().toISOString());
}
