import type { Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { AppError, notFound, validationError, type ErrorDetail } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import type { Page, PageQuery } from "../../shared/pagination.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import { connectionOf } from "../connections/service.ts";
import type { ConnectionRow } from "../connections/repo.ts";
import { providerRowOf } from "../embedding-providers/service.ts";
import { listNarrowedByEnvironment, resolveEnvironment } from "../environments/service.ts";
import { builtInModelProblems, columnProblems, isNumericType, modelProblems, sourceColumn, sourceProblems } from "./checks.ts";
import { normalizeColumns, presentVectorTable } from "./present.ts";
import { deleteVectorTableRow, failActiveTasksOf, findVectorTable, findVectorTableByName, insertVectorTable, pageVectorTables, type VectorTableRow } from "./repo.ts";
import { collectionName, generationSpec } from "./render.ts";
import type { CreateVectorTable, SourceSchema, VectorTable } from "./schemas.ts";
import { readSourceSchema } from "./source-schema.ts";
import { hasStorage } from "./state.ts";
import { managedTableStore, platformKey, storageFailure, tableStore, type TableSpec, type TableStore } from "./storage.ts";
import { openSource } from "../connections/sources.ts";
import type { SourceColumn } from "../../drivers/sources/types.ts";

export const nameTaken = (name: string) => new AppError("name_taken", `A vector table named "${name}" already exists in this organization`);

export function throwIfProblems(problems: ErrorDetail[]): void {
  if (problems.length > 0) throw validationError(problems);
}

/** Runs a write that may lose the race on the (org, name) unique index, answering 409 then. */
export async function guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
}

/** The warehouse folds unquoted identifiers to upper case; Postgres names are exact. */
export const foldsCase = (connection: ConnectionRow) => connection.provider === "db_warehouse";

/** The organization's vector table, or 404 (a foreign id included). */
export async function vectorTableOf(services: Services, orgId: string, id: string): Promise<VectorTableRow> {
  const row = await findVectorTable(services.database.db, orgId, id);
  if (!row) throw notFound("Vector table");
  return row;
}

type EmbeddingChoice = { mode: "managed" | "platform"; connection: ConnectionRow; environmentId: string; providerId: string | null; model: string; dimensions: number };

/**
 * Who embeds and with what (docs/vector-tables.md#storage-modes): a provider is required in managed mode and
 * for platform mode on the relational provider; it must live in the table's environment and offer
 * the model at those dimensions. Without one, the warehouse platform's built-in models apply.
 */
export async function embeddingChoiceProblems(services: Services, orgId: string, choice: EmbeddingChoice): Promise<ErrorDetail[]> {
  if (choice.providerId === null) {
    if (choice.mode === "managed") return [{ path: "embedding_provider_id", message: "is required in managed mode" }];
    if (choice.connection.provider === "db_relational") return [{ path: "embedding_provider_id", message: "is required for platform mode on a db_relational connection" }];
    return builtInModelProblems(choice.model, choice.dimensions);
  }
  const provider = await providerRowOf(services, orgId, choice.providerId);
  if (provider.environmentId !== choice.environmentId) {
    return [{ path: "embedding_provider_id", message: "the embedding provider belongs to another environment than the vector table" }];
  }
  return modelProblems(provider.provider, choice.model, choice.dimensions);
}

/** POST /v1/vector-tables: a `full` key; the environment from `X-Environment-Id` (docs/api.md#environments). */
export async function createVectorTable(services: Services, actor: KeyActor, input: CreateVectorTable, environmentHeader: string | null | undefined): Promise<VectorTable> {
  requireWriteAccess(actor);
  const columns = normalizeColumns(input.columns);
  throwIfProblems(columnProblems(columns));
  const environment = await resolveEnvironment(services, actor, environmentHeader);
  const connection = await connectionOf(services, actor.orgId, input.connection_id);
  const mode = input.mode ?? connection.mode;
  const platform = mode === "platform" ? await platformStoreFor(services, connection) : null;
  const problems: ErrorDetail[] = [];
  if (connection.environmentId !== environment.id) problems.push({ path: "connection_id", message: "the connection belongs to another environment than the vector table" });
  if (mode !== connection.mode) problems.push({ path: "mode", message: `must match the connection's mode (${connection.mode})` });
  const providerId = input.embedding_provider_id ?? null;
  problems.push(...(await embeddingChoiceProblems(services, actor.orgId, { mode, connection, environmentId: environment.id, providerId, model: input.embedding_model, dimensions: input.embedding_dimensions })));
  throwIfProblems(problems);
  const db = services.database.db;
  if (await findVectorTableByName(db, actor.orgId, input.name)) throw nameTaken(input.name);

  // Last, the slow part: the source's schema, read live.
  const schema = await readSourceSchema(services, connection, input.source_table);
  throwIfProblems(sourceProblems(schema, input.source_table, input.primary_key_column, columns, foldsCase(connection)));
  const pkColumn = sourceColumn(schema, input.primary_key_column, foldsCase(connection))!;
  const pkType = pkColumn.type;

  const now = services.clock.now().toISOString();
  const id = newId();
  const row: VectorTableRow = {
    id,
    orgId: actor.orgId,
    environmentId: environment.id,
    connectionId: connection.id,
    embeddingProviderId: providerId,
    name: input.name,
    sourceTable: input.source_table,
    primaryKeyColumn: input.primary_key_column,
    columns,
    embeddingModel: input.embedding_model,
    embeddingDimensions: input.embedding_dimensions,
    mode,
    syncMode: input.sync_mode ?? "batch",
    syncStatus: "pending",
    vectorstoreCollection: collectionName(id, input.name),
    platformVectorRef: platform ? platform.refFor(id, input.name) : null,
    numericPk: isNumericType(pkType),
    configVersion: 1,
    servedConfigVersion: 1,
    servingModel: input.embedding_model,
    servingDimensions: input.embedding_dimensions,
    totalRows: 0,
    syncedRows: 0,
    rowsPending: 0,
    lastSyncStartedAt: null,
    lastSyncAt: null,
    oldestPendingChangeAt: null,
    sourceLagBytes: null,
    cdcCheckpoint: null,
    lastError: null,
    lastErrorAt: null,
    feedResyncReason: null,
    createdAt: now,
    updatedAt: now,
  };
  const spec: TableSpec = { ...generationSpec(row), primaryKey: { name: pkColumn.name, type: pkType } };
  if (platform) throwIfProblems(platform.specProblems(spec).map((message) => ({ path: "columns", message })));
  await guardName(input.name, () => insertVectorTable(db, row));
  // The storage now: a managed collection, or the platform table (which checks the database has
  // what it needs). A platform without a store in this build gets none (its backfill says why).
  const store = mode === "managed" ? managedTableStore(services.vectors, row.vectorstoreCollection) : platform ? await tableStore(services, row) : null;
  try {
    if (store?.warehouse) spec.primaryKey = await warehouseKey(services, connection, store, input.source_table, pkColumn);
    await store?.create(spec);
  } catch (err) {
    await deleteVectorTableRow(db, actor.orgId, id);
    throw storageFailure(err, connection.id);
  }
  services.logger.info({ org_id: actor.orgId, vector_table_id: id, mode, sync_mode: row.syncMode }, "vector table created");
  return presentVectorTable(row);
}

/** GET /v1/vector-tables: oldest first; `X-Environment-Id`, when sent, narrows (docs/api.md#environments). */
export async function listVectorTables(services: Services, actor: KeyActor, query: PageQuery, environmentHeader: string | null | undefined): Promise<Page<VectorTable>> {
  return listNarrowedByEnvironment(services, actor, "vector-tables", query, environmentHeader, (environmentId, page) => pageVectorTables(services.database.db, actor.orgId, environmentId, page), presentVectorTable);
}

export async function getVectorTable(services: Services, actor: KeyActor, id: string): Promise<VectorTable> {
  return presentVectorTable(await vectorTableOf(services, actor.orgId, id));
}

/** GET /v1/vector-tables/{id}/schema: the source table as it is now (docs/vector-tables.md#vector-tables). */
export async function getSourceSchema(services: Services, actor: KeyActor, id: string): Promise<SourceSchema> {
  const row = await vectorTableOf(services, actor.orgId, id);
  const connection = await connectionOf(services, actor.orgId, row.connectionId);
  let columns;
  try {
    columns = await readSourceSchema(services, connection, row.sourceTable);
  } catch (err) {
    // The table was there at creation: gone now, that is the source's state, not a bad request.
    if (err instanceof AppError && err.code === "validation_error") throw new AppError("source_error", `The source table "${row.sourceTable}" no longer exists`);
    throw err;
  }
  const pk = sourceColumn(columns, row.primaryKeyColumn, foldsCase(connection));
  return { columns: columns.map((c) => ({ name: c.name, type: c.type, nullable: c === pk ? false : c.nullable })) };
}

/**
 * DELETE /v1/vector-tables/{id}: stops what runs for the table (its tasks, its change feed), then
 * removes the record and its storage. A managed collection goes after the record: one left behind
 * by a crash is only disk, whereas a record without its collection would answer errors. A
 * platform table sits in the customer's database, where a leftover is not ours to forget: it is
 * dropped first (a database that cannot be reached → 502, the vector table kept, DELETE again),
 * and once more after the record, in case a task that was starting made it again meanwhile. A
 * DELETE that fails after the feed was freed resumes the table it keeps.
 */
export async function deleteVectorTable(services: Services, actor: KeyActor, id: string): Promise<void> {
  requireWriteAccess(actor);
  const row = await vectorTableOf(services, actor.orgId, id);
  await services.engine.stop(row);
  try {
    if (hasStorage(row) && row.mode === "platform") await dropStorageOf(services, row).catch((err) => Promise.reject(storageFailure(err, row.connectionId)));
    const now = services.clock.now().toISOString();
    await services.database.db.transaction(async (tx) => {
      await failActiveTasksOf(tx, actor.orgId, row.id, "vector table deleted", now);
      await services.engine.forget(tx, row);
      await deleteVectorTableRow(tx, actor.orgId, row.id);
    });
  } catch (err) {
    services.engine.resumed(row); // kept: it syncs again (a cdc table recreates its feed) until a DELETE succeeds
    throw err;
  }
  await dropStorageOf(services, row).catch((err) => services.logger.warn({ err, vector_table_id: id }, "could not drop the vector table's storage after its record"));
  services.logger.info({ org_id: actor.orgId, vector_table_id: id }, "vector table deleted");
}

/** Drops the table's collection or platform table with every generation, if there (idempotent). */
export async function dropStorageOf(services: Services, row: VectorTableRow): Promise<void> {
  if (!hasStorage(row)) return;
  await (await tableStore(services, row)).drop();
}

/** The source key's exact type on the warehouse (storage.ts platformKey), over a short-lived source. */
async function warehouseKey(services: Services, connection: ConnectionRow, store: TableStore, table: string, column: SourceColumn) {
  const source = await openSource(services, connection, { maxConnections: 1 });
  try {
    return await platformKey(store, source, table, column);
  } finally {
    await source.close().catch(() => undefined);
  }
}

/** The platform store a platform-mode table on this connection will use; null when its provider has none in this build. */
async function platformStoreFor(services: Services, connection: ConnectionRow) {
  if (!services.platform.supports(connection.provider)) return null;
  return services.platform.of(connection).catch((err) => Promise.reject(storageFailure(err, connection.id)));
}
