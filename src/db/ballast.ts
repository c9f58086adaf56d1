// Why this exists: SQLite cannot open a WAL database whose `-shm` file is gone (SQLite deletes it
// at the last clean close) on a full disk — it must first write the 32 KiB shared-memory index,
// and fails with SQLITE_IOERR. A service stopped cleanly on a full disk then could not start
// again: under a supervisor, a crash loop, with no reads served at all. So the data dir keeps a
// small ballast file (CockroachDB's "emergency ballast" is the same idea): a start that finds the
// disk full removes it, which gives SQLite the room to open, so reads answer and writes say 507
// (docs/running.md#storage-full). A later start puts it back once space has returned.
import { statfsSync, unlinkSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

/** Room for the -shm index (32 KiB), an empty -wal and a few pages, with a wide margin. */
export const BALLAST_BYTES = 1024 * 1024;
/** Put the ballast back only when it takes a small share of the free space (never the last of it). */
const RESTORE_WHEN_FREE = 16 * BALLAST_BYTES;

export const ballastPath = (dataDir: string) => join(dataDir, "ballast");

/** Free bytes for an unprivileged writer on the data dir's filesystem; Infinity if unknown. */
export function freeBytes(dataDir: string): number {
  try {
    const s = statfsSync(dataDir);
    return s.bavail * s.bsize;
  } catch {
    return Infinity;
  }
}

/** Removes the ballast when the disk has less free space than the ballast holds; true if it did. */
export function releaseBallastIfFull(dataDir: string): boolean {
  const path = ballastPath(dataDir);
  if (freeBytes(dataDir) >= BALLAST_BYTES || !existsSync(path)) return false;
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes the ballast if it is missing and the disk has room to spare; a failure leaves none. */
export function restoreBallast(dataDir: string): boolean {
  const path = ballastPath(dataDir);
  if (existsSync(path) || freeBytes(dataDir) < RESTORE_WHEN_FREE) return false;
  try {
    // Real zeros, not a sparse file: the blocks must be allocated to be worth anything when freed.
    writeFileSync(path, Buffer.alloc(BALLAST_BYTES), { mode: 0o600, flag: "wx" });
    return true;
  } catch (err) {
    // EEXIST: another start put it there. Otherwise (ENOSPC…) remove what was half written.
    if ((err as { code?: string }).code !== "EEXIST") {
      try {
        unlinkSync(path);
      } catch {
        // nothing was written
      }
    }
    return false;
  }
}
