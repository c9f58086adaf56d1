import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const connections = sqliteTable("connections", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  environmentId: text("environment_id").notNull(),
  name: text("name").notNull(),
  provider: text("provider", { enum: ["db_warehouse", "db_relational"] }).notNull(),
  mode: text("mode", { enum: ["managed", "platform"] }).notNull(),
  status: text("status", { enum: ["pending", "connected", "failed"] }).notNull(),
  // The credentials object as JSON, sealed by services.secrets (AES-256-GCM, docs/running.md#secrets); never
  // plain text, never answered.
  credentials: text("credentials").notNull(),
  lastTestedAt: text("last_tested_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [uniqueIndex("connections_org_name_idx").on(t.orgId, t.name), index("connections_org_env_idx").on(t.orgId, t.environmentId)]);
