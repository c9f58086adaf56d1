import type { VectorTable } from "./schemas.ts";
import type { ColumnConfig, VectorTableRow } from "./tables.ts";

/**
 * A column configuration with its keys in one fixed order and absent options left out, so two
 * configurations compare equal exactly when they mean the same (PUT decides on a rebackfill by it).
 */
export function normalizeColumns(columns: readonly ColumnConfig[]): ColumnConfig[] {
  return columns.map((c) => ({
    name: c.name,
    role: c.role,
    ...(c.ordinal === undefined ? {} : { ordinal: c.ordinal }),
    ...(c.name_prefix === undefined ? {} : { name_prefix: c.name_prefix }),
    ...(c.filter_type === undefined ? {} : { filter_type: c.filter_type }),
  }));
}

export const sameColumns = (a: readonly ColumnConfig[], b: readonly ColumnConfig[]): boolean =>
  JSON.stringify(normalizeColumns(a)) === JSON.stringify(normalizeColumns(b));

/** The answer shape (docs/vector-tables.md#vector-tables), field by field: engine bookkeeping columns stay inside. */
export function presentVectorTable(row: VectorTableRow): VectorTable {
  return {
    id: row.id,
    org_id: row.orgId,
    environment_id: row.environmentId,
    connection_id: row.connectionId,
    embedding_provider_id: row.embeddingProviderId,
    name: row.name,
    source_table: row.sourceTable,
    primary_key_column: row.primaryKeyColumn,
    columns: normalizeColumns(row.columns),
    embedding_model: row.embeddingModel,
    embedding_dimensions: row.embeddingDimensions,
    mode: row.mode,
    sync_mode: row.syncMode,
    sync_status: row.syncStatus,
    vectorstore_collection: row.vectorstoreCollection,
    platform_vector_ref: row.platformVectorRef,
    total_rows: row.totalRows,
    synced_rows: row.syncedRows,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
