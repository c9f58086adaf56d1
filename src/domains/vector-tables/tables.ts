import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Column configuration as docs/vector-tables.md#columns states it; stored as JSON on the vector table. */
export type ColumnConfig = {
  name: string;
  role: "embedding" | "metadata";
  ordinal?: number;
  name_prefix?: string;
  filter_type?: "keyword" | "integer" | "float" | "boolean";
};

export type SyncStatus = "pending" | "backfilling" | "synced" | "paused" | "error" | "pending_rebackfill";

export const vectorTables = sqliteTable("vector_tables", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  environmentId: text("environment_id").notNull(),
  connectionId: text("connection_id").notNull(),
  embeddingProviderId: text("embedding_provider_id"),
  name: text("name").notNull(),
  sourceTable: text("source_table").notNull(),
  primaryKeyColumn: text("primary_key_column").notNull(),
  columns: text("columns", { mode: "json" }).$type<ColumnConfig[]>().notNull(),
  embeddingModel: text("embedding_model").notNull(),
  embeddingDimensions: integer("embedding_dimensions").notNull(),
  mode: text("mode", { enum: ["managed", "platform"] }).notNull(),
  syncMode: text("sync_mode", { enum: ["batch", "cdc"] }).notNull(),
  syncStatus: text("sync_status").$type<SyncStatus>().notNull(),
  /** `vt_<id[0..8]>_<name>` (docs/vector-tables.md#vector-tables); fixed at creation, so a rename keeps the collection. */
  vectorstoreCollection: text("vectorstore_collection").notNull(),
  platformVectorRef: text("platform_vector_ref"),
  /** Whether the source's primary key is numeric (ties break numerically, docs/vector-tables.md#ranking-and-ties). */
  numericPk: integer("numeric_pk", { mode: "boolean" }).notNull(),
  /**
   * Bumped by every PUT that changes columns, model or dimensions. A backfill/rebackfill task
   * re-reads it between pages: when it moved, the task starts over building the new version, so
   * the table always converges to its latest configuration with one task at a time.
   */
  configVersion: integer("config_version").notNull().default(1),
  /**
   * The `config_version` the live generation was built for. While it differs from
   * `config_version` a re-backfill is owed: every fill builds a new generation and none writes
   * the live one, whose vectors belong to the older configuration (issue 12, item 6).
   */
  servedConfigVersion: integer("served_config_version").notNull().default(1),
  /**
   * The model and dimensions of the vectors in the live generation: what a query embeds with.
   * After a PUT they differ from embedding_model/embedding_dimensions until the rebackfill swaps
   * its new generation in (it sets them at the swap, in the swap's transaction); queries keep
   * answering from the old vectors meanwhile (docs/vector-tables.md#configuration-changes). Set at creation.
   */
  servingModel: text("serving_model"),
  servingDimensions: integer("serving_dimensions"),
  totalRows: integer("total_rows").notNull().default(0),
  syncedRows: integer("synced_rows").notNull().default(0),
  /** The known backlog: rows known to differ from the source and not yet applied (docs/vector-tables.md#counters). */
  rowsPending: integer("rows_pending").notNull().default(0),
  /** Start of the last completed sync pass (batch staleness) and its end (`last_sync_at`). */
  lastSyncStartedAt: text("last_sync_started_at"),
  lastSyncAt: text("last_sync_at"),
  /** Commit time of the oldest change not yet applied (cdc staleness); null when caught up. */
  oldestPendingChangeAt: text("oldest_pending_change_at"),
  /**
   * cdc on Postgres: bytes of WAL the source has written past the applied position, as last seen
   * by the consumer (the slot's backlog, other tables' WAL included); null where the source cannot tell.
   */
  sourceLagBytes: integer("source_lag_bytes"),
  /** The source's change-feed position (LSN / timestamp), committed with the changes it covers. */
  cdcCheckpoint: text("cdc_checkpoint"),
  /**
   * Why the change feed was lost, while the hash pass that follows its recreation is owed: set in
   * the write that records the new feed, cleared by the pass. A restart mid-pass runs it again.
   */
  feedResyncReason: text("feed_resync_reason"),
  lastError: text("last_error"),
  lastErrorAt: text("last_error_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [
  uniqueIndex("vector_tables_org_name_idx").on(t.orgId, t.name),
  index("vector_tables_org_env_idx").on(t.orgId, t.environmentId),
  index("vector_tables_connection_idx").on(t.connectionId),
  index("vector_tables_provider_idx").on(t.embeddingProviderId),
]);

export type VectorTableRow = typeof vectorTables.$inferSelect;
