import { defineRoute } from "../../http/route.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { startBackfill, getSyncStatus, pauseSync, resumeSync } from "./control.ts";
import { BackfillStarted, CreateVectorTable, ListVectorTables, SourceSchema, SyncControlResult, SyncStatusObject, UpdateVectorTable, VectorTable, VectorTablePage } from "./schemas.ts";
import { createVectorTable, deleteVectorTable, getSourceSchema, getVectorTable, listVectorTables } from "./service.ts";
import { updateVectorTable } from "./update.ts";

const tag = "Vector tables";
const syncTag = "Sync";

export const vectorTableRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables",
    tag,
    summary: "Create a vector table over a source table (the source schema is checked live)",
    auth: "api_key",
    body: CreateVectorTable,
    headers: [{ name: "X-Environment-Id", description: "The environment to create the vector table in; absent → the organization's prod environment" }],
    status: 201,
    response: VectorTable,
    handler: ({ services, actor, body, headers }) => createVectorTable(services, actor, body, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables",
    tag,
    summary: "List vector tables (cursor pagination, oldest first)",
    auth: "api_key",
    query: ListVectorTables,
    headers: [{ name: "X-Environment-Id", description: "When sent, only that environment's vector tables" }],
    response: VectorTablePage,
    handler: ({ services, actor, query, headers }) => listVectorTables(services, actor, query, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables/:vector_table_id",
    tag,
    summary: "Get a vector table",
    auth: "api_key",
    response: VectorTable,
    handler: ({ services, actor, params }) => getVectorTable(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "PUT",
    path: "/v1/vector-tables/:vector_table_id",
    tag,
    summary: "Rename a vector table or change its columns, model or dimensions (a configuration change queues a rebackfill)",
    auth: "api_key",
    body: UpdateVectorTable,
    response: VectorTable,
    handler: ({ services, actor, params, body }) => updateVectorTable(services, actor, params.vector_table_id, body),
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/vector-tables/:vector_table_id",
    tag,
    summary: "Delete a vector table, its vectors, its tasks and its change feed",
    auth: "api_key",
    status: 204,
    handler: ({ services, actor, params }) => deleteVectorTable(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables/:vector_table_id/schema",
    tag,
    summary: "The source table's columns, read live (names, source type names, nullability)",
    auth: "api_key",
    response: SourceSchema,
    handler: ({ services, actor, params }) => getSourceSchema(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables/:vector_table_id/backfill",
    tag,
    summary: "Start a backfill (409 while a backfill or rebackfill is pending or running)",
    auth: "api_key",
    response: BackfillStarted,
    handler: ({ services, actor, params }) => startBackfill(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables/:vector_table_id/sync/status",
    tag: syncTag,
    summary: "Sync status: state, backlog, staleness, last error",
    auth: "api_key",
    response: SyncStatusObject,
    handler: ({ services, actor, params }) => getSyncStatus(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables/:vector_table_id/sync/pause",
    tag: syncTag,
    summary: "Pause sync (queries keep working; 409 when already paused)",
    auth: "api_key",
    response: SyncControlResult,
    handler: ({ services, actor, params }) => pauseSync(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables/:vector_table_id/sync/resume",
    tag: syncTag,
    summary: "Resume a paused sync (409 when not paused)",
    auth: "api_key",
    response: SyncControlResult,
    handler: ({ services, actor, params }) => resumeSync(services, actor, params.vector_table_id),
  }),
];
