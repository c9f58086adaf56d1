// Test world for the pgvector platform store: a throwaway database on the machine's PostgreSQL
// (which must have pgvector: CI installs it; a missing extension fails the tests, never skips),
// and a store connected the way the service connects to a source (connectionOptions).
import { openPgvectorStore, type PgvectorStore } from "../../../src/drivers/platform/pgvector.ts";
import { throwawayPostgres, type ThrowawayDatabase } from "../../harness.ts";

export interface PlatformWorld {
  db: ThrowawayDatabase;
  store: PgvectorStore;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function requirePgvector(db: ThrowawayDatabase): Promise<void> {
  try {
    await db.sql.unsafe("CREATE EXTENSION IF NOT EXISTS vector");
  } catch (e) {
    throw new Error(
      `pgvector is required for the platform store tests and CREATE EXTENSION vector failed on ${db.name}: ${e instanceof Error ? e.message : String(e)}. ` +
        "Install pgvector for the machine's PostgreSQL (bash .ci/run does it).",
    );
  }
}

/** `prepare` runs on the new database (pgvector created) before the store connects. */
export async function platformWorld(tuning: { exactMaxRows?: number } = {}, prepare?: (db: ThrowawayDatabase) => Promise<void>): Promise<PlatformWorld> {
  const db = await throwawayPostgres();
  try {
    await requirePgvector(db);
    await prepare?.(db);
  } catch (e) {
    await db[Symbol.asyncDispose]();
    throw e;
  }
  const url = new URL(db.url);
  const store = await openPgvectorStore(
    { host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) },
    { maxConnections: 6, ...tuning },
  );
  return {
    db,
    store,
    async [Symbol.asyncDispose]() {
      await store.close();
      await db[Symbol.asyncDispose]();
    },
  };
}
