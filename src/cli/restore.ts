// `vecsync restore --from FILE --data-dir D`: puts a backup in place as D's database, for the next
// `serve` there. Only into a data directory no process holds (its lock, taken here for the whole
// restore, so no serve can start halfway) and whose database holds nothing yet: a restore never
// replaces records. The file is copied beside the target, checked, and renamed over it, so an
// interrupted restore leaves no half database under the real name.
import { closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from "node:fs";
import { fsyncPath } from "../shared/files.ts";
import { join, resolve } from "node:path";
import { loadConfig } from "../config.ts";
import { lockDataDir, PRIVATE_UMASK } from "../data-dir.ts";
import { MASTER_KEY_FILE } from "../key-check.ts";
import { databaseFileOf } from "./backup.ts";
import { describeDatabase, recordsIn } from "./database-file.ts";
import { usage } from "./errors.ts";
import { flagsOf } from "./options.ts";

export const RESTORE_HELP = `usage: vecsync restore --from FILE [--data-dir D]

Makes FILE (a backup written by vecsync backup) the database of data directory D
(VECSYNC_DATA_DIR, default ./data), which must not be in use by a running service and must not
hold a database with records. Copy master.key and jwt.secret kept with the backup into D before
the next serve (or set VECSYNC_MASTER_KEY and VECSYNC_JWT_SECRET): serve refuses to start without
the master key while the database holds encrypted credentials. The next serve applies any newer
migrations and rebuilds the vector indexes from the database.`;

const SQLITE_MAGIC = "SQLite format 3\0";

function isSqliteFile(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.toString("latin1") === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** Removes an empty database and whatever belongs to it: a stale -wal would be replayed into the restored file. */
function clearEmptyDatabase(file: string, dataDir: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) rmSync(path, { force: true });
  // Index checkpoints describe the database they were taken of, not the restored one.
  rmSync(join(dataDir, "indexes"), { recursive: true, force: true });
}

export async function runRestore(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const flags = flagsOf(args, { strings: ["from", "data-dir"], booleans: ["help"] });
  if (flags.booleans.has("help")) {
    console.log(RESTORE_HELP);
    return 0;
  }
  const from = flags.strings.from;
  if (!from) throw usage("--from FILE is required: the backup to restore");
  const source = resolve(from);
  if (!existsSync(source) || !statSync(source).isFile()) throw usage(`${source} is not a file`);
  if (!isSqliteFile(source)) throw usage(`${source} is not a SQLite database (a file written by vecsync backup)`);
  const config = loadConfig({ ...(flags.strings["data-dir"] ? { "data-dir": flags.strings["data-dir"] } : {}) }, env);
  const target = databaseFileOf(config.databaseUrl);

  process.umask(PRIVATE_UMASK); // docs/running.md#one-process: 0600 files, 0700 folders
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const lock = lockDataDir(config.dataDir); // StartRefused (exit 2) naming the running service's pid
  try {
    if (existsSync(target) && statSync(target).size > 0) {
      const records = await recordsIn(target);
      if (records > 0) throw usage(`${target} already holds a database with ${records} user and organization record(s); restore only into a new or empty data directory`);
    }
    clearEmptyDatabase(target, config.dataDir);
    const staging = `${target}.restoring`;
    rmSync(staging, { force: true }); // left by an interrupted restore
    copyFileSync(source, staging, constants.COPYFILE_EXCL);
    let summary: string;
    try {
      fsyncPath(staging);
      summary = await describeDatabase(staging);
    } catch (err) {
      rmSync(staging, { force: true });
      for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${staging}${suffix}`, { force: true });
      throw err;
    }
    renameSync(staging, target);
    fsyncPath(config.dataDir);
    console.log(`restored ${source} into ${target} (${summary})`);
  } finally {
    lock.release();
  }
  const keyHere = config.masterKey !== null || existsSync(join(config.dataDir, MASTER_KEY_FILE));
  console.log(
    keyHere
      ? "the master key in place must be the one the backup was made with; the next serve applies migrations and rebuilds the vector indexes"
      : `next: copy master.key and jwt.secret kept with the backup into ${config.dataDir} (mode 0600), then serve; it applies migrations and rebuilds the vector indexes`,
  );
  return 0;
}
