import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Times are ISO 8601 UTC text throughout: they sort correctly as strings and read well in SQL.

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(), // stored lowercased
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
});

/** The one live sign-in code per e-mail (a new code replaces the previous one). */
export const otpCodes = sqliteTable("otp_codes", {
  email: text("email").primaryKey(),
  codeHash: text("code_hash").notNull(), // HMAC-SHA256 under a key derived from the master key
  expiresAt: text("expires_at").notNull(),
  failedAttempts: integer("failed_attempts").notNull().default(0),
  createdAt: text("created_at").notNull(),
});

/** One successful sign-in; its refresh tokens form a family revoked together on reuse. */
export const authSessions = sqliteTable("auth_sessions", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
}, (t) => [index("auth_sessions_user_idx").on(t.userId)]);

export const refreshTokens = sqliteTable("refresh_tokens", {
  id: text("id").primaryKey(),
  sessionId: text("session_id").notNull(),
  tokenHash: text("token_hash").notNull().unique(), // SHA-256 of the opaque token
  expiresAt: text("expires_at").notNull(),
  rotatedAt: text("rotated_at"),
  createdAt: text("created_at").notNull(),
}, (t) => [index("refresh_tokens_session_idx").on(t.sessionId)]);

/** Timestamps of counted events (otp requests, failed verifications) for sliding-window limits. */
export const rateEvents = sqliteTable("rate_events", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  key: text("key").notNull(), // e.g. `otp:email:<email>`, `otp:ip:<ip>`, `verify_fail:<email>`
  at: text("at").notNull(),
}, (t) => [index("rate_events_key_at_idx").on(t.key, t.at)]);
