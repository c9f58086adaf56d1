import { usersOf, type Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { AppError, DriverError, notFound, validationError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import type { Page, PageQuery } from "../../shared/pagination.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { hostPolicy } from "../../shared/host-guard.ts";
import { openSource } from "./sources.ts";
import { pgvectorOf } from "./platform.ts";
import type { SourceConnector } from "../../drivers/sources/types.ts";
import { listNarrowedByEnvironment, resolveEnvironment } from "../environments/service.ts";
import { openCredentials, sealCredentials, secretsOf, validateCredentials } from "./credentials.ts";
import {
  deleteConnectionRow,
  findConnection,
  findConnectionByName,
  insertConnection,
  pageConnections,
  recordTestResult,
  updateConnectionRow,
  type ConnectionChanges,
  type ConnectionRow,
} from "./repo.ts";
import { CONNECTION_PROVIDERS, type Connection, type ConnectionProvider, type CreateConnection, type TestResult, type UpdateConnection } from "./schemas.ts";

/** The answer shape (docs/api.md#connections): written by hand so the sealed credentials can never leak into it. */
export function presentConnection(row: ConnectionRow): Connection {
  return {
    id: row.id,
    org_id: row.orgId,
    environment_id: row.environmentId,
    name: row.name,
    provider: row.provider,
    mode: row.mode,
    status: row.status,
    last_tested_at: row.lastTestedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const nameTaken = (name: string) => new AppError("name_taken", `A connection named "${name}" already exists in this organization`);

function providerOf(value: string): ConnectionProvider {
  const provider = CONNECTION_PROVIDERS.find((p) => p === value);
  if (!provider) throw validationError([{ path: "provider", message: `must be ${CONNECTION_PROVIDERS.join(" or ")}` }]);
  return provider;
}

/** Writes `write`, turning a lost race on the (org, name) unique index into 409. */
async function guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
}

/** POST /v1/providers/{provider}/connections: a `full` key, any role. */
export async function createConnection(services: Services, actor: KeyActor, providerParam: string, input: CreateConnection, environmentHeader: string | null | undefined): Promise<Connection> {
  requireWriteAccess(actor);
  const provider = providerOf(providerParam);
  const credentials = validateCredentials(provider, input.credentials, hostPolicy(services.config));
  const environment = await resolveEnvironment(services, actor, environmentHeader);
  const db = services.database.db;
  if (await findConnectionByName(db, actor.orgId, input.name)) throw nameTaken(input.name);
  const now = services.clock.now().toISOString();
  const row: ConnectionRow = {
    id: newId(),
    orgId: actor.orgId,
    environmentId: environment.id,
    name: input.name,
    provider,
    mode: input.mode,
    status: "pending",
    credentials: sealCredentials(services.secrets, credentials),
    lastTestedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await guardName(input.name, () => insertConnection(db, row));
  return presentConnection(row);
}

/** GET /v1/connections: oldest first; `X-Environment-Id`, when sent, narrows (docs/api.md#environments). */
export async function listConnections(services: Services, actor: KeyActor, query: PageQuery, environmentHeader: string | null | undefined): Promise<Page<Connection>> {
  return listNarrowedByEnvironment(services, actor, "connections", query, environmentHeader, (environmentId, page) => pageConnections(services.database.db, actor.orgId, environmentId, page), presentConnection);
}

/** The organization's connection, or 404 (also for another organization's id). */
export async function connectionOf(services: Services, orgId: string, id: string): Promise<ConnectionRow> {
  const row = await findConnection(services.database.db, orgId, id);
  if (!row) throw notFound("Connection");
  return row;
}

export async function getConnection(services: Services, actor: KeyActor, id: string): Promise<Connection> {
  return presentConnection(await connectionOf(services, actor.orgId, id));
}

/**
 * PUT /v1/connections/{id}: `credentials` replaces the stored object whole (validated for the
 * connection's provider) and sends the status back to `pending` (docs/api.md#connections), the earlier test no
 * longer saying anything about the new credentials.
 */
export async function updateConnection(services: Services, actor: KeyActor, id: string, input: UpdateConnection): Promise<Connection> {
  requireWriteAccess(actor);
  const row = await connectionOf(services, actor.orgId, id);
  const db = services.database.db;
  const changes: ConnectionChanges = {};
  if (input.name !== undefined && input.name !== row.name) {
    if (await findConnectionByName(db, actor.orgId, input.name)) throw nameTaken(input.name);
    changes.name = input.name;
  }
  if (input.credentials !== undefined) {
    const credentials = validateCredentials(row.provider, input.credentials, hostPolicy(services.config));
    Object.assign(changes, { credentials: sealCredentials(services.secrets, credentials), status: "pending", lastTestedAt: null } satisfies ConnectionChanges);
  }
  if (Object.keys(changes).length === 0) return presentConnection(row);
  changes.updatedAt = services.clock.now().toISOString();
  await guardName(input.name ?? row.name, () => updateConnectionRow(db, actor.orgId, row.id, changes));
  return presentConnection({ ...row, ...changes });
}

/** DELETE /v1/connections/{id}: 409 `in_use` while vector tables read through it. */
export async function deleteConnection(services: Services, actor: KeyActor, id: string): Promise<void> {
  requireWriteAccess(actor);
  const row = await connectionOf(services, actor.orgId, id);
  const users = await usersOf(services.dependents.connection, actor.orgId, row.id);
  if (users.length > 0) {
    throw new AppError("in_use", `The connection is still used by ${users.join(" and ")}; delete them first`, { details: { used_by: users } });
  }
  await deleteConnectionRow(services.database.db, actor.orgId, row.id);
}

/** A connection test waits this long for the database to accept (a closed port answers at once). */
const TEST_CONNECT_TIMEOUT_SEC = 10;

const scrub = (text: string, secrets: string[]) => secrets.reduce((t, secret) => (secret.length >= 3 ? t.replaceAll(secret, "***") : t), text);

/** Connects and runs the driver's probe; a database that refuses is a result, not an error. */
async function probe(services: Services, row: ConnectionRow): Promise<TestResult> {
  let source: SourceConnector | undefined;
  try {
    source = await openSource(services, row, { connectTimeoutSec: TEST_CONNECT_TIMEOUT_SEC, maxConnections: 1 });
    const { latencyMs } = await source.test();
    // Relational: whether platform mode can keep vectors in this database (pgvector).
    const pgvector = row.provider === "db_relational" ? await pgvectorOf(services, row, TEST_CONNECT_TIMEOUT_SEC).catch(() => undefined) : undefined;
    return { status: "connected", details: { latency_ms: latencyMs, ...(pgvector ? { pgvector } : {}) } };
  } catch (err) {
    // A refused host is the caller's mistake (400); anything but a driver's failure is ours (500).
    if (!(err instanceof DriverError)) throw err;
    const secrets = secretsOf(openCredentials(services.secrets, row.credentials));
    return { status: "failed", details: { error: scrub(err.message, secrets) } };
  } finally {
    await source?.close().catch(() => undefined);
  }
}

/**
 * POST /v1/connections/{id}/test: it stores its outcome (status, last_tested_at), so it needs a
 * `full` key. A failed test answers 200 with the database's own words, minus any secret.
 */
export async function testConnection(services: Services, actor: KeyActor, id: string): Promise<TestResult> {
  requireWriteAccess(actor);
  const row = await connectionOf(services, actor.orgId, id);
  const result = await probe(services, row);
  await recordTestResult(services.database.db, row, result.status, services.clock.now().toISOString());
  return result;
}
