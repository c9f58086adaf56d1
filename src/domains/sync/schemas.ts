import { type } from "arktype";
import { PageQuery, pageSchema } from "../../shared/pagination.ts";
import { PASS_KINDS, PASS_STATUSES } from "./tables.ts";

// The sync domain's own endpoints (docs/vector-tables.md#sync-history, #sync-now, #row-errors): the
// history of a table's passes, a pass started by hand, the rows that failed on their own. Status,
// pause and resume are vector-tables'.

/** One history entry: exactly these fields (CONTRACT 10). */
export const SyncPass = type({
  id: "string",
  vector_table_id: "string",
  kind: type.enumerated(...PASS_KINDS),
  status: type.enumerated(...PASS_STATUSES),
  started_at: "string",
  finished_at: "string | null",
  rows_scanned: "number.integer",
  rows_embedded: "number.integer",
  rows_metadata_only: "number.integer",
  rows_deleted: "number.integer",
  rows_unchanged: "number.integer",
  tokens: "number.integer",
  error: "string | null",
});
export type SyncPass = typeof SyncPass.infer;

export const SyncHistoryPage = pageSchema(SyncPass);
export const ListSyncHistory = PageQuery;

/** POST …/sync: the pass's history entry is `pass_id`. */
export const SyncStarted = type({ vector_table_id: "string", pass_id: "string" });
export type SyncStarted = typeof SyncStarted.infer;

/** One row that failed on its own (docs/vector-tables.md#row-errors): exactly these fields (CONTRACT 11). */
export const RowError = type({ pk: "string", error: "string", attempts: "number.integer", first_seen_at: "string", last_seen_at: "string" });
export type RowError = typeof RowError.infer;

export const RowErrorsPage = pageSchema(RowError);
export const ListRowErrors = PageQuery;

/** tRPC inputs: the path parameter becomes a field. */
export const SyncHistoryInput = type({ "+": "reject", vector_table_id: "string", "limit?": PageQuery.get("limit"), "cursor?": "string" });
export const SyncTableInput = type({ "+": "reject", vector_table_id: "string" });
export const RowErrorsInput = SyncHistoryInput;
