// What backup and restore check of a database file, and the note on keys both print.
import { createClient } from "@libsql/client";
import { join } from "node:path";
import { count } from "./render.ts";
import { failure } from "./errors.ts";

type Counts = { organizations: number; users: number; vectorTables: number };

async function countsOf(path: string): Promise<{ check: string; counts: Counts | null }> {
  const client = createClient({ url: `file:${path}`, intMode: "number" });
  try {
    const check = String((await client.execute("PRAGMA quick_check")).rows[0]?.[0] ?? "no answer");
    try {
      const { rows } = await client.execute(
        "SELECT (SELECT count(*) FROM organizations) AS o, (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM vector_tables) AS v",
      );
      return { check, counts: { organizations: Number(rows[0]!.o), users: Number(rows[0]!.u), vectorTables: Number(rows[0]!.v) } };
    } catch (err) {
      if (/no such table/i.test((err as Error).message)) return { check, counts: null };
      throw err;
    }
  } catch (err) {
    throw failure(`${path} cannot be read as a database: ${(err as Error).message}`);
  } finally {
    client.close();
  }
}

/** "2 organizations, 3 vector tables" for a file that passes SQLite's quick_check and is vecsync's; else exit 1 saying what is wrong. */
export async function describeDatabase(path: string): Promise<string> {
  const { check, counts } = await countsOf(path);
  if (check !== "ok") throw failure(`${path} fails SQLite's integrity check: ${check}`);
  if (!counts) throw failure(`${path} is not a vecsync database (it has no organizations table)`);
  return `${count(counts.organizations)} organization(s), ${count(counts.vectorTables)} vector table(s)`;
}

/** Users or organizations in an existing database file: a restore must not replace them. 0 for one never migrated. */
export async function recordsIn(path: string): Promise<number> {
  const { counts } = await countsOf(path);
  return counts ? counts.organizations + counts.users : 0;
}

/** The keys are never in a backup; what to keep beside it (docs/running.md#backup-and-restore). */
export function keysNote(config: { dataDir: string; masterKey: unknown; jwtSecret: unknown }): string {
  const master = config.masterKey !== null ? "VECSYNC_MASTER_KEY" : join(config.dataDir, "master.key");
  const jwt = config.jwtSecret !== null ? "VECSYNC_JWT_SECRET" : join(config.dataDir, "jwt.secret");
  return `the keys are not in it: keep ${master} and ${jwt} with the backup; without the master key the stored provider keys and connection credentials cannot be read`;
}
