import type { Client } from "@libsql/client";
import { createHash } from "node:crypto";
import { migrations } from "./migrations/index.ts";

// Same bookkeeping table and rules as drizzle's libSQL migrator, so drizzle-kit agrees with us;
// the difference is that the SQL comes from the bundle, not from a folder on disk.
const TABLE = "__drizzle_migrations";

export async function migrate(client: Client): Promise<{ applied: string[] }> {
  await client.execute(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
  const last = await client.execute(`SELECT created_at FROM ${TABLE} ORDER BY created_at DESC LIMIT 1`);
  const lastAt = last.rows[0] ? Number(last.rows[0].created_at) : -1;
  const pending = migrations.filter((m) => m.when > lastAt);
  if (pending.length === 0) return { applied: [] };
  const statements = pending.flatMap((m) => [
    ...m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean),
    { sql: `INSERT INTO ${TABLE} (hash, created_at) VALUES (?, ?)`, args: [createHash("sha256").update(m.sql).digest("hex"), m.when] },
  ]);
  // One batch is one transaction: a migration applies whole or not at all.
  await client.batch(statements, "write");
  return { applied: pending.map((m) => m.tag) };
}
