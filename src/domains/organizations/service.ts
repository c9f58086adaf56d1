import type { Services } from "../../services.ts";
import type { UserActor } from "../../shared/actor.ts";
import { AppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { enqueue } from "../../scheduler/enqueue.ts";
import { ORG_DELETION } from "../tasks/kinds.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { revokeOrganizationApiKeys } from "../api-keys/repo.ts";
import { issueApiKey, issueFurtherApiKey, presentApiKey } from "../api-keys/service.ts";
import type { ApiKeyRow } from "../api-keys/repo.ts";
import { take } from "../auth/rate-limit.ts";
import type { ApiKey, CreateApiKey } from "../api-keys/schemas.ts";
import { insertNamedEnvironment } from "../environments/service.ts";
import { PROD_ENVIRONMENT } from "../environments/schemas.ts";
import { membershipOf, requireActive, requireOrgRole } from "./access.ts";
import { presentOrganization } from "./present.ts";
import { findOrganizationByName, insertMember, insertOrganization, listUserOrganizations, markOrganizationDeleting, type OrganizationRow } from "./repo.ts";
import type { CreateOrganization, Organization, OrganizationWithRole } from "./schemas.ts";

/** The name of the key handed out with a new membership (docs/api.md#organizations). */
export const FIRST_KEY_NAME = "default";
export const NEW_ORGANIZATION_TIER = "free";

const nameTaken = (name: string) => new AppError("name_taken", `An organization named "${name}" already exists`);

/**
 * POST /v1/organizations: the caller becomes owner; the `prod` environment and the owner's first
 * API key are created in the same transaction, so no organization exists without them.
 */
export async function createOrganization(services: Services, actor: UserActor, input: CreateOrganization): Promise<{ organization: Organization; api_key: string }> {
  const db = services.database.db;
  if (await findOrganizationByName(db, input.name)) throw nameTaken(input.name);
  const now = services.clock.now();
  const at = now.toISOString();
  const org: OrganizationRow = { id: newId(), name: input.name, status: "active", tier: NEW_ORGANIZATION_TIER, createdAt: at };
  try {
    const raw = await db.transaction(async (tx) => {
      await insertOrganization(tx, org);
      await insertMember(tx, { id: newId(), orgId: org.id, userId: actor.userId, role: "owner", createdAt: at });
      await insertNamedEnvironment(tx, org.id, PROD_ENVIRONMENT, now);
      const key = await issueApiKey(tx, { orgId: org.id, userId: actor.userId, name: FIRST_KEY_NAME, permission: "full", now });
      return key.raw;
    });
    return { organization: presentOrganization(org), api_key: raw };
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

/** GET /v1/organizations: the caller's organizations (those being deleted too, until they are gone), with the caller's role. */
export async function listOrganizations(services: Services, actor: UserActor): Promise<{ data: OrganizationWithRole[] }> {
  const rows = await listUserOrganizations(services.database.db, actor.userId);
  return { data: rows.map(({ org, role }) => ({ ...presentOrganization(org), role })) };
}

/** Keys one user may mint with a sign-in per hour, over all organizations (docs/security.md#api-keys). */
const RECOVERY_KEYS_PER_HOUR = 10;

/**
 * POST /v1/organizations/{id}/api-keys: any member, for themselves — the way back for a member who
 * lost every key, since POST /v1/api-keys needs one. Either permission: a key acts with its
 * creator's role whatever it is, so no key can do more than the member. Refused (409) while the
 * organization is being deleted: its keys were revoked, and a new one must not outlive them.
 * A sign-in is the weaker credential (a stolen token or mailbox), so this route is rate-limited and
 * each key it mints is announced by e-mail to the member.
 */
export async function createOrganizationApiKey(services: Services, actor: UserActor, orgId: string, input: CreateApiKey): Promise<{ key: string; api_key: ApiKey }> {
  const { org } = await membershipOf(services.database.db, orgId, actor.userId);
  requireActive(org);
  const now = services.clock.now();
  const message = "Too many API keys created with a sign-in; try again later";
  await take(services.database.db, [{ key: `key_recovery:user:${actor.userId}`, limit: RECOVERY_KEYS_PER_HOUR, windowMs: 60 * 60 * 1000, message }], now);
  const { raw, row } = await issueFurtherApiKey(services.database.db, { orgId, userId: actor.userId, name: input.name, permission: input.permission ?? "full", now });
  services.logger.info({ org_id: orgId, key_id: row.id, user_id: actor.userId }, "API key created with a sign-in");
  void services.mailer.send(keyNotice(actor.email, org.name, row)).catch((err: unknown) => services.logger.error({ err, user_id: actor.userId }, "API key notice e-mail failed"));
  return { key: raw, api_key: presentApiKey(row) };
}

function keyNotice(email: string, orgName: string, row: ApiKeyRow) {
  return {
    to: email,
    subject: `A new vecsync API key in ${orgName}`,
    text:
      `An API key "${row.name}" (${row.keyPrefix}…, permission ${row.permission}) was created for you in the organization "${orgName}" ` +
      `at ${row.createdAt}, with a sign-in to your account.\n\nIf this was not you, revoke it (DELETE /v1/api-keys/${row.id}) ` +
      `and tell the organization's owner: someone can read your e-mail or holds a sign-in of yours.\n`,
  };
}

export async function getOrganization(services: Services, actor: UserActor, orgId: string): Promise<Organization> {
  const { org } = await membershipOf(services.database.db, orgId, actor.userId);
  return presentOrganization(org);
}

/**
 * DELETE /v1/organizations/{id}: owner only. The organization turns `deleting`, its keys stop
 * working at once, and an `org_deletion` task removes everything (deletion.ts).
 */
export async function deleteOrganization(services: Services, actor: UserActor, orgId: string): Promise<{ organization_id: string; status: "deleting"; task_id: string }> {
  const db = services.database.db;
  const membership = await membershipOf(db, orgId, actor.userId);
  requireOrgRole(membership, ["owner"], "delete it");
  const deleting = () => new AppError("organization_deleting", "The organization is already being deleted");
  if (membership.org.status === "deleting") throw deleting();
  const now = services.clock.now();
  const taskId = await db.transaction(async (tx) => {
    if (!(await markOrganizationDeleting(tx, orgId))) throw deleting();
    await revokeOrganizationApiKeys(tx, orgId, now.toISOString());
    const task = await enqueue(tx, ORG_DELETION, { orgId, targetId: orgId, payload: { organization_id: orgId }, now });
    return task.id;
  });
  services.logger.info({ org_id: orgId, task_id: taskId }, "organization deletion requested");
  return { organization_id: orgId, status: "deleting", task_id: taskId };
}
