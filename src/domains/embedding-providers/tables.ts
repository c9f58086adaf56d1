import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const embeddingProviders = sqliteTable("embedding_providers", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  environmentId: text("environment_id").notNull(),
  name: text("name").notNull(),
  provider: text("provider", { enum: ["emb_a", "emb_b", "emb_c", "local"] }).notNull(),
  // services.secrets.seal(api_key, "embedding_provider.api_key"); null for `local`, which needs none.
  apiKeySealed: text("api_key_sealed"),
  defaultModel: text("default_model"),
  baseUrl: text("base_url"),
  status: text("status", { enum: ["active"] }).notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [
  uniqueIndex("embedding_providers_org_name_idx").on(t.orgId, t.name),
  index("embedding_providers_org_env_idx").on(t.orgId, t.environmentId),
]);
