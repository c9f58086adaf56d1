import { usersOf, type Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { pageRequest, toPage, type Page, type PageQuery, type PageRequest } from "../../shared/pagination.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { isUniqueViolation, type Executor } from "../../db/executor.ts";
import { deleteEnvironmentRow, findEnvironment, findEnvironmentByName, insertEnvironment, pageEnvironments, type EnvironmentRow } from "./repo.ts";
import { PROD_ENVIRONMENT, type CreateEnvironment, type Environment } from "./schemas.ts";

export function presentEnvironment(row: EnvironmentRow): Environment {
  return { id: row.id, org_id: row.orgId, name: row.name, created_at: row.createdAt };
}

const nameTaken = (name: string) => new AppError("name_taken", `An environment named "${name}" already exists in this organization`);

/** Inserts an environment, turning a lost race on the (org, name) unique index into 409. */
export async function insertNamedEnvironment(db: Executor, orgId: string, name: string, now: Date): Promise<EnvironmentRow> {
  const row: EnvironmentRow = { id: newId(), orgId, name, createdAt: now.toISOString() };
  try {
    await insertEnvironment(db, row);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
  return row;
}

/** POST /v1/environments: any role with a `full` key. */
export async function createEnvironment(services: Services, actor: KeyActor, input: CreateEnvironment): Promise<Environment> {
  requireWriteAccess(actor);
  const db = services.database.db;
  if (await findEnvironmentByName(db, actor.orgId, input.name)) throw nameTaken(input.name);
  return presentEnvironment(await insertNamedEnvironment(db, actor.orgId, input.name, services.clock.now()));
}

const listScope = (orgId: string) => `environments:${orgId}`;

export async function listEnvironments(services: Services, actor: KeyActor, query: PageQuery): Promise<Page<Environment>> {
  const scope = listScope(actor.orgId);
  const page = pageRequest(services.config.masterKey, scope, query);
  const rows = await pageEnvironments(services.database.db, actor.orgId, page);
  return toPage(services.config.masterKey, scope, page, rows, (r) => ({ createdAt: r.createdAt, id: r.id }), presentEnvironment);
}

async function environmentOf(services: Services, orgId: string, id: string): Promise<EnvironmentRow> {
  const row = await findEnvironment(services.database.db, orgId, id);
  if (!row) throw notFound("Environment");
  return row;
}

export async function getEnvironment(services: Services, actor: KeyActor, id: string): Promise<Environment> {
  return presentEnvironment(await environmentOf(services, actor.orgId, id));
}

/** DELETE /v1/environments/{id}: never `prod`; never while resources are attached. */
export async function deleteEnvironment(services: Services, actor: KeyActor, id: string): Promise<void> {
  requireWriteAccess(actor);
  const env = await environmentOf(services, actor.orgId, id);
  if (env.name === PROD_ENVIRONMENT) throw new AppError("environment_protected", "The prod environment cannot be deleted");
  const attached = await usersOf(services.dependents.environment, actor.orgId, env.id);
  if (attached.length > 0) {
    throw new AppError("in_use", `The environment still has ${attached.join(" and ")} attached; delete them first`, { details: { attached } });
  }
  await deleteEnvironmentRow(services.database.db, actor.orgId, env.id);
}

/**
 * The `X-Environment-Id` guard (docs/api.md#environments) for creating connections, providers and vector
 * tables: absent → the organization's `prod` environment; unknown or another organization's → 404.
 */
export async function resolveEnvironment(services: Services, actor: KeyActor, headerValue: string | null | undefined): Promise<EnvironmentRow> {
  const id = headerValue?.trim();
  if (!id) {
    const prod = await findEnvironmentByName(services.database.db, actor.orgId, PROD_ENVIRONMENT);
    if (!prod) throw notFound("Environment");
    return prod;
  }
  return environmentOf(services, actor.orgId, id);
}

export const ENVIRONMENT_HEADER = "x-environment-id";

/**
 * One page of an organization's resources of one kind (`list` names it), oldest first, narrowed
 * to the `X-Environment-Id` environment when the header is sent (docs/api.md#environments). The cursor is bound
 * to the list and its narrowing: a cursor of one environment's list is refused by another's.
 */
export async function listNarrowedByEnvironment<R extends { createdAt: string; id: string }, T>(
  services: Services,
  actor: KeyActor,
  list: string,
  query: PageQuery,
  environmentHeader: string | null | undefined,
  fetch: (environmentId: string | null, page: PageRequest) => Promise<R[]>,
  present: (row: R) => T,
): Promise<Page<T>> {
  const environmentId = environmentHeader?.trim() ? (await resolveEnvironment(services, actor, environmentHeader)).id : null;
  const scope = `${list}:${actor.orgId}:${environmentId ?? "*"}`;
  const page = pageRequest(services.config.masterKey, scope, query);
  const rows = await fetch(environmentId, page);
  return toPage(services.config.masterKey, scope, page, rows, (r) => ({ createdAt: r.createdAt, id: r.id }), present);
}
