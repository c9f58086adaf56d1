import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Facts about this installation (e.g. `instance_id`, set once at first migration). */
export const serviceMeta = sqliteTable("service_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull(),
});
