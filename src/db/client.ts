import { createClient, type Client } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { fastReads } from "./fast-reads.ts";
import { fastWrites } from "./fast-writes.ts";
import { BUSY_TIMEOUT_MS, gateWrites } from "./write-gate.ts";

// No schema is handed to drizzle: queries name their tables (each domain's tables.ts), and the
// relational API (db.query.*) that a schema would type is not used. drizzle-kit reads the tables
// files directly (drizzle.config.ts).
export type Db = LibSQLDatabase;
export type Database = { client: Client; db: Db; isLocal: boolean; close(): void };

/** The file of a `file:` URL (`file:/abs`, `file:///abs`, `file:rel`), or null for memory or URL options. */
function localPath(url: string): string | null {
  const rest = url.slice("file:".length);
  if (rest.includes("?") || rest.includes(":memory:")) return null;
  return rest.startsWith("//") ? rest.slice(2) : rest;
}

/**
 * Opens the libSQL database. A `file:` URL gets WAL and the write gate (its busy timeout, docs/running.md#data-directory); any other URL
 * (`libsql://`, `http(s)://`) is a libSQL server, so nothing here may assume a local file. A local
 * file's plain reads take the statement cache of fast-reads.ts, its plain write batches that of fast-writes.ts.
 */
export async function openDatabase(url: string, authToken?: string): Promise<Database> {
  const isLocal = url.startsWith("file:");
  const raw = createClient({ url, authToken, intMode: "number", timeout: BUSY_TIMEOUT_MS });
  const file = isLocal ? localPath(url) : null;
  // fastWrites sits inside the gate, so its write connection only ever writes while the gate
  // holds every other writer of this process back; fastReads outside it, as reads never wait.
  const client = isLocal ? (file ? fastReads(gateWrites(fastWrites(raw, file, BUSY_TIMEOUT_MS)), file, BUSY_TIMEOUT_MS) : gateWrites(raw)) : raw;
  if (isLocal) {
    // journal_mode is stored in the file; synchronous is per connection and FULL is SQLite's
    // default in WAL mode, which the self-check verifies.
    try {
      await client.execute("PRAGMA journal_mode = WAL");
    } catch (err) {
      // E.g. no room for the -shm index on a full disk: a start that waits for space retries
      // this, and must not leave one open file behind per attempt.
      raw.close();
      throw err;
    }
  }
  const db = drizzle(client);
  return { client, db, isLocal, close: () => client.close() };
}

/**
 * The file behind a `file:` database URL (`file:/abs`, `file:rel`, `file:///abs`), or null for a
 * libSQL server. Backup, restore and the start-up key check read the file itself.
 */
export function localDatabasePath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const rest = url.slice("file:".length).split("?")[0]!;
  return rest.startsWith("//") ? decodeURIComponent(new URL(url).pathname) : rest;
}
