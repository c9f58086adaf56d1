import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Rows whose text renders empty (docs/vector-tables.md#text-and-metadata), per generation of the
 * table's collection: not in the collection, yet synced. Kept in the database, not in memory, so
 * `synced_rows` (vectors + these) stays true after a restart, and a hash pass skips them while their
 * text hash holds instead of fetching them every time. Per generation because a re-backfill's new
 * configuration may render other rows empty than the served one. No foreign key (see the
 * migrations): removed with the vector table and its organization (sync/empty-rows.ts).
 */
export const syncEmptyRows = sqliteTable(
  "sync_empty_rows",
  {
    vectorTableId: text("vector_table_id").notNull(),
    generation: integer("generation").notNull(),
    pk: text("pk").notNull(),
    /** The stored text hash (bound to the embedding tag) the row had when it rendered empty. */
    textHash: text("text_hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.vectorTableId, t.generation, t.pk] })],
);
