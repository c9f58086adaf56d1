import type { Services } from "../../services.ts";
import type { KeyActor, Permission } from "../../shared/actor.ts";
import { AppError, notFound, validationError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { generateApiKey, hashApiKey, keyPrefixOf } from "./keys.ts";
import { isManager, requireWriteAccess } from "../../shared/authz.ts";
import type { Db } from "../../db/client.ts";
import type { Executor } from "../../db/executor.ts";
import { findApiKey, insertApiKey, insertApiKeyWithin, listApiKeys, revokeApiKey, type ApiKeyRow } from "./repo.ts";
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
 * Unrevoked keys one member may hold in one organization (docs/security.md#api-keys): far above
 * any deployment's needs (a key per service and environment), and a bound on what one member,
 * or one stolen sign-in, can mint.
 */
export const MAX_LIVE_KEYS_PER_MEMBER = 100;

type KeyInput = { orgId: string; userId: string; name: string; permission: Permission; now: Date };

function keyRow(input: KeyInput): IssuedApiKey {
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
  return { raw, row };
}

/**
 * Mints a key for a member and stores only its hash. Runs inside the caller's transaction so
 * organization creation and invitation acceptance hand out their first key atomically.
 */
export async function issueApiKey(db: Executor, input: KeyInput): Promise<IssuedApiKey> {
  const issued = keyRow(input);
  await insertApiKey(db, issued.row);
  return issued;
}

/** A further key for a member: refused (400) once the member holds MAX_LIVE_KEYS_PER_MEMBER. */
export async function issueFurtherApiKey(db: Db, input: KeyInput): Promise<IssuedApiKey> {
  const issued = keyRow(input);
  if (!(await insertApiKeyWithin(db, issued.row, MAX_LIVE_KEYS_PER_MEMBER))) {
    throw validationError([{ path: "name", message: `a member may hold at most ${MAX_LIVE_KEYS_PER_MEMBER} unrevoked API keys in an organization; revoke one first` }]);
  }
  return issued;
}

/** POST /v1/api-keys: any role, permission `full`; the raw key is in this answer only. */
export async function createApiKey(services: Services, actor: KeyActor, input: CreateApiKey): Promise<{ key: string; api_key: ApiKey }> {
  requireWriteAccess(actor);
  const { raw, row } = await issueFurtherApiKey(services.database.db, {
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
