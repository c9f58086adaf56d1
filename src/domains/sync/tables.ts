import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Rows left out of a generation of the table's collection, yet synced: those whose text renders
 * empty (docs/vector-tables.md#text-and-metadata; `error` null), and those that failed on their
 * own (docs/vector-tables.md#row-errors; `error` says why, listed by GET …/errors). Kept in the
 * database, not in memory, so `synced_rows` (vectors + empty rows) stays true after a restart, and
 * a hash pass skips them while their text hash holds instead of fetching them every time. Per
 * generation because a re-backfill's new configuration may render other rows empty than the
 * served one. No foreign key (see the migrations): removed with the vector table and its
 * organization (sync/empty-rows.ts).
 */
export const syncEmptyRows = sqliteTable(
  "sync_empty_rows",
  {
    vectorTableId: text("vector_table_id").notNull(),
    generation: integer("generation").notNull(),
    pk: text("pk").notNull(),
    /** The stored text hash (bound to the embedding tag) the row had when it was left out. */
    textHash: text("text_hash").notNull(),
    /** Why the row failed; null when its text renders empty. The three fields below are set with it. */
    error: text("error"),
    /** Times the row was read and failed, its text hash changing in between. */
    attempts: integer("attempts"),
    firstSeenAt: text("first_seen_at"),
    lastSeenAt: text("last_seen_at"),
  },
  (t) => [primaryKey({ columns: [t.vectorTableId, t.generation, t.pk] })],
);

export type LeftOutRow = typeof syncEmptyRows.$inferSelect;

export const PASS_KINDS = ["backfill", "rebackfill", "batch", "reconcile", "cdc"] as const;
export type PassKind = (typeof PASS_KINDS)[number];
export const PASS_STATUSES = ["running", "completed", "failed"] as const;
export type PassStatus = (typeof PASS_STATUSES)[number];

/**
 * The sync history (docs/vector-tables.md#sync-history): one row per fill task run, batch pass,
 * reconciling pass, and per minute of a change stream's activity. Written only through
 * sync/history.ts (startPass/finishPass), pruned to the newest 1,000 per table on insert. No
 * foreign key, like `sync_empty_rows`: removed with the vector table and its organization.
 */
export const syncPasses = sqliteTable(
  "sync_passes",
  {
    id: text("id").primaryKey(),
    vectorTableId: text("vector_table_id").notNull(),
    orgId: text("org_id").notNull(),
    kind: text("kind", { enum: PASS_KINDS }).notNull(),
    status: text("status", { enum: PASS_STATUSES }).notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    rowsScanned: integer("rows_scanned").notNull().default(0),
    rowsEmbedded: integer("rows_embedded").notNull().default(0),
    rowsMetadataOnly: integer("rows_metadata_only").notNull().default(0),
    rowsDeleted: integer("rows_deleted").notNull().default(0),
    rowsUnchanged: integer("rows_unchanged").notNull().default(0),
    tokens: integer("tokens").notNull().default(0),
    error: text("error"),
  },
  (t) => [
    // The list (newest first, keyset on started_at and id) and the prune walk this one.
    index("sync_passes_table_started_idx").on(t.vectorTableId, t.startedAt, t.id),
    index("sync_passes_org_idx").on(t.orgId),
  ],
);

export type SyncPassRow = typeof syncPasses.$inferSelect;
