import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const environments = sqliteTable("environments", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [uniqueIndex("environments_org_name_idx").on(t.orgId, t.name)]);
