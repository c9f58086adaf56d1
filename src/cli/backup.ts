// `vecsync backup --to FILE`: a consistent copy of the service's database while it serves.
//
// `VACUUM INTO` runs inside one read transaction, so the copy is the database as of one instant,
// committed WAL frames included; in WAL mode that reader blocks no writer of the running service
// (it only keeps the WAL from being checkpointed past it until it ends). The copy is compact, in
// rollback-journal mode, and needs nothing beside it but the keys. No lock is taken: the data
// directory stays the service's. Index files are not copied: they are caches of the database
// and a start rebuilds any index whose checkpoint is missing (docs/day-two.md).
import { createClient } from "@libsql/client";
import { existsSync, statSync, unlinkSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfig } from "../config.ts";
import { PRIVATE_UMASK } from "../data-dir.ts";
import { localDatabasePath } from "../db/client.ts";
import { BUSY_TIMEOUT_MS } from "../db/write-gate.ts";
import { failure, usage } from "./errors.ts";
import { flagsOf } from "./options.ts";
import { describeDatabase, keysNote } from "./database-file.ts";

export const BACKUP_HELP = `usage: vecsync backup --to FILE [--data-dir D]

Writes a consistent copy of the database of data directory D (VECSYNC_DATA_DIR, default ./data;
VECSYNC_DATABASE_URL when it names a file) to FILE, while the service keeps serving. FILE must not
exist; it is created mode 0600. Vector index files are not copied: they are rebuilt on restore.
The keys are not in it: keep master.key and jwt.secret of D with the backup.`;

/** The local database file of the configuration, or exit 2 saying why there is none to copy. */
export function databaseFileOf(databaseUrl: string): string {
  const file = localDatabasePath(databaseUrl);
  if (file === null) throw usage(`the database is a libSQL server (VECSYNC_DATABASE_URL); back it up with the server's own tools`);
  return resolve(file);
}

export async function runBackup(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const flags = flagsOf(args, { strings: ["to", "data-dir"], booleans: ["help"] });
  if (flags.booleans.has("help")) {
    console.log(BACKUP_HELP);
    return 0;
  }
  const to = flags.strings.to;
  if (!to) throw usage("--to FILE is required: where to write the backup");
  const config = loadConfig({ ...(flags.strings["data-dir"] ? { "data-dir": flags.strings["data-dir"] } : {}) }, env);
  const source = databaseFileOf(config.databaseUrl);
  if (!existsSync(source)) throw usage(`no database at ${source} (is --data-dir right?)`);
  const target = resolve(to);
  if (existsSync(target)) throw usage(`${target} already exists; a backup never overwrites a file`);

  process.umask(PRIVATE_UMASK); // the copy holds hashed keys and sealed credentials: 0600
  const client = createClient({ url: `file:${source}`, intMode: "number", timeout: BUSY_TIMEOUT_MS });
  try {
    await client.execute({ sql: "VACUUM INTO ?", args: [target] });
  } catch (err) {
    // SQLite may leave a partial file behind; it was not there before (checked above).
    if (existsSync(target)) unlinkSync(target);
    throw failure(`backup failed: ${(err as Error).message}`);
  } finally {
    client.close();
  }
  const summary = await describeDatabase(target);
  const megabytes = (statSync(target).size / 1_048_576).toFixed(1);
  console.log(`backup written: ${target} (${megabytes} MB; ${summary}) from ${source}`);
  console.log(keysNote(config));
  console.log("vector index files are not in it: a service started on a restored copy rebuilds them from the database");
  return 0;
}
