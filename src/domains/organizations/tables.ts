import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  status: text("status", { enum: ["active", "deleting"] }).notNull(),
  tier: text("tier").notNull(),
  createdAt: text("created_at").notNull(),
});

export const members = sqliteTable("members", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  userId: text("user_id").notNull(),
  role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [uniqueIndex("members_org_user_idx").on(t.orgId, t.userId), index("members_user_idx").on(t.userId)]);

export const invitations = sqliteTable("invitations", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull(),
  email: text("email").notNull(),
  role: text("role", { enum: ["admin", "member"] }).notNull(),
  invitedBy: text("invited_by").notNull(),
  tokenHash: text("token_hash").notNull().unique(),
  expiresAt: text("expires_at").notNull(),
  acceptedAt: text("accepted_at"),
  createdAt: text("created_at").notNull(),
}, (t) => [index("invitations_org_idx").on(t.orgId, t.email)]);
