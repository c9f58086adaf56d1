import { type } from "arktype";
import { PageQuery, pageSchema } from "../../shared/pagination.ts";

export const FilterType = type("'keyword' | 'integer' | 'float' | 'boolean'");

/** Column configuration (docs/vector-tables.md#columns); the cross-field rules (roles, uniqueness) live in config.ts. */
export const ColumnConfigSchema = type({
  "+": "reject",
  name: "1 <= string <= 255",
  role: "'embedding' | 'metadata'",
  "ordinal?": "number.integer",
  "name_prefix?": "string <= 1000",
  "filter_type?": FilterType,
});

/** At most this many configured columns: each metadata column is an indexed store column. */
export const MAX_COLUMNS = 100;
const Columns = ColumnConfigSchema.array().atLeastLength(1).atMostLength(MAX_COLUMNS);

export const VectorTableName = type("1 <= string <= 100");
const Dimensions = type("1 <= number.integer <= 100000");

const createFields = {
  name: VectorTableName,
  connection_id: "string",
  "embedding_provider_id?": "string | null",
  source_table: "1 <= string <= 255",
  primary_key_column: "1 <= string <= 255",
  columns: Columns,
  embedding_model: "1 <= string <= 200",
  embedding_dimensions: Dimensions,
  "mode?": "'managed' | 'platform'",
  "sync_mode?": "'batch' | 'cdc'",
} as const;

const updateFields = {
  "name?": VectorTableName,
  "columns?": Columns,
  "embedding_model?": "1 <= string <= 200",
  "embedding_dimensions?": Dimensions,
} as const;

export const CreateVectorTable = type({ "+": "reject", ...createFields });
export type CreateVectorTable = typeof CreateVectorTable.infer;

export const UpdateVectorTable = type({ "+": "reject", ...updateFields });
export type UpdateVectorTable = typeof UpdateVectorTable.infer;

export const ListVectorTables = PageQuery;

export const VectorTableIdParam = type({ "+": "reject", vector_table_id: "string" });

/** tRPC inputs: the path parameter and the `X-Environment-Id` header become fields. */
export const CreateVectorTableInput = type({ "+": "reject", ...createFields, "environment_id?": "string" });
export const UpdateVectorTableInput = type({ "+": "reject", ...updateFields, vector_table_id: "string" });
export const ListVectorTablesInput = type({ "+": "reject", "limit?": PageQuery.get("limit"), "cursor?": "string", "environment_id?": "string" });

const ColumnConfigOut = type({ name: "string", role: "'embedding' | 'metadata'", "ordinal?": "number", "name_prefix?": "string", "filter_type?": FilterType });

export const SYNC_STATUSES = ["pending", "backfilling", "synced", "paused", "error", "pending_rebackfill"] as const;
const SyncStatusSchema = type.enumerated(...SYNC_STATUSES);

/** docs/vector-tables.md#vector-tables, exactly these fields. */
export const VectorTable = type({
  id: "string",
  org_id: "string",
  environment_id: "string",
  connection_id: "string",
  embedding_provider_id: "string | null",
  name: "string",
  source_table: "string",
  primary_key_column: "string",
  columns: ColumnConfigOut.array(),
  embedding_model: "string",
  embedding_dimensions: "number.integer",
  mode: "'managed' | 'platform'",
  sync_mode: "'batch' | 'cdc'",
  sync_status: SyncStatusSchema,
  vectorstore_collection: "string",
  platform_vector_ref: "string | null",
  total_rows: "number.integer",
  synced_rows: "number.integer",
  created_at: "string",
  updated_at: "string",
});
export type VectorTable = typeof VectorTable.infer;

export const VectorTablePage = pageSchema(VectorTable);

/** GET …/schema (docs/vector-tables.md#vector-tables): the source table's columns in table order. */
export const SourceSchema = type({ columns: type({ name: "string", type: "string", nullable: "boolean" }).array() });
export type SourceSchema = typeof SourceSchema.infer;

/** POST …/backfill (docs/vector-tables.md#backfill). */
export const BackfillStarted = type({ vector_table_id: "string", status: "'backfilling'", total_rows: "number.integer", synced_rows: "number.integer" });
export type BackfillStarted = typeof BackfillStarted.infer;

/** GET …/sync/status (docs/vector-tables.md#sync-status). */
export const SyncStatusObject = type({
  vector_table_id: "string",
  sync_status: SyncStatusSchema,
  last_sync_at: "string | null",
  rows_pending: "number.integer",
  staleness_secs: "number.integer",
  last_error: "string | null",
  last_error_at: "string | null",
});
export type SyncStatusObject = typeof SyncStatusObject.infer;

/** POST …/sync/pause and …/sync/resume (docs/vector-tables.md#pause-and-resume). */
export const SyncControlResult = type({ vector_table_id: "string", sync_status: "'paused' | 'synced'", message: "string" });
export type SyncControlResult = typeof SyncControlResult.infer;
