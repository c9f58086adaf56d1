import { createClient, type Client } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import * as schema from "./schema.ts";

export type Db = LibSQLDatabase<typeof schema>;
export type Database = { client: Client; db: Db; isLocal: boolean; close(): void };

const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens the libSQL database. A `file:` URL gets WAL and a busy timeout (CONTRACT 1); any other URL
 * (`libsql://`, `http(s)://`) is a libSQL server, so nothing here may assume a local file.
 */
export async function openDatabase(url: string, authToken?: string): Promise<Database> {
  const isLocal = url.startsWith("file:");
  const client = createClient({ url, authToken, intMode: "number", timeout: BUSY_TIMEOUT_MS });
  if (isLocal) {
    // journal_mode is stored in the file; synchronous is per connection and FULL is SQLite's
    // default in WAL mode, which the self-check verifies.
    await client.execute("PRAGMA journal_mode = WAL");
  }
  const db = drizzle(client, { schema });
  return { client, db, isLocal, close: () => client.close() };
}
