import { defineRoute } from "../../http/route.ts";
import { ListRowErrors, ListSyncHistory, RowErrorsPage, SyncHistoryPage, SyncStarted } from "./schemas.ts";
import { listRowErrors, listSyncHistory, startSync } from "./service.ts";

const tag = "Sync";

export const syncRoutes = [
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables/:vector_table_id/sync/history",
    tag,
    summary: "The table's sync passes, newest first: backfills, batch and reconciling passes, and a change stream's minutes (cursor pagination)",
    auth: "api_key",
    query: ListSyncHistory,
    response: SyncHistoryPage,
    handler: ({ services, actor, params, query }) => listSyncHistory(services, actor, params.vector_table_id, query),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables/:vector_table_id/sync",
    tag,
    summary: "Start a sync pass now (batch: a batch pass; cdc: a reconciling pass) without waiting for it; 409 while one runs",
    auth: "api_key",
    errors: ["sync_running", "already_paused", "vector_table_not_ready"],
    status: 202,
    response: SyncStarted,
    handler: ({ services, actor, params }) => startSync(services, actor, params.vector_table_id),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/vector-tables/:vector_table_id/errors",
    tag,
    summary: "The rows that failed on their own and are not embedded (a text over the size limit), first failed first (cursor pagination)",
    auth: "api_key",
    errors: ["source_error"],
    query: ListRowErrors,
    response: RowErrorsPage,
    handler: ({ services, actor, params, query }) => listRowErrors(services, actor, params.vector_table_id, query),
  }),
];
