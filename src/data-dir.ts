// One process per data directory (docs/running.md#one-process), and private files in it.
//
// The lock is flock(2) on `<data-dir>/lock`, taken through libc because neither node:fs nor Bun
// exposes flock. The kernel releases it when the process dies, however it dies (kill -9, OOM,
// power loss), so a stale lock is impossible, and a pid file's race between "is the holder alive"
// and "take over" does not exist. The holder's pid is written into the file only so that the
// refused process can name it.
import { dlopen, FFIType } from "bun:ffi";
import { chmodSync, closeSync, ftruncateSync, lstatSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Start-up cannot go on for a reason the operator must fix: exit 2 with this one line. */
export class StartRefused extends Error {}

const LOCK_EX = 2;
const LOCK_NB = 4;

function libcFlock(): (fd: number, op: number) => number {
  const path = process.platform === "darwin" ? "libc.dylib" : "libc.so.6";
  const libc = dlopen(path, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
  return (fd, op) => libc.symbols.flock(fd, op);
}

export type DataDirLock = { path: string; release(): void };

/**
 * Holds `<data-dir>/lock` for the life of the process. A second process gets StartRefused naming
 * the holder's pid. The descriptor stays open on purpose: closing it would drop the lock.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, "lock");
  const fd = openSync(path, "a+", 0o600); // never truncates: the holder's pid must survive our open
  if (libcFlock()(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    const holder = readFileSync(path, "utf8").trim();
    throw new StartRefused(`data directory ${dataDir} is in use by process ${holder || "(unknown pid)"} (lock ${path})`);
  }
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`);
  } catch {
    // A full disk must not stop the start (issue 12): the lock is held; only the pid is missing.
  }
  return { path, release: () => closeSync(fd) };
}

/** The process umask that makes every file created 0600 and every folder 0700 (docs/running.md#one-process). */
export const PRIVATE_UMASK = 0o077;

// What the service itself puts in the data dir. Only these are tightened, never the whole folder:
// a data dir pointed at a folder holding other things (even `.`) must not lose their modes.
const OWN_ENTRIES = ["vecsync.db", "vecsync.db-wal", "vecsync.db-shm", "jwt.secret", "master.key", "outbox.jsonl", "lock", "ballast", "indexes"];

/**
 * Files the service creates are 0600 and folders 0700 (docs/running.md#one-process). New ones are covered by
 * PRIVATE_UMASK whoever creates them (SQLite's -wal and -shm, usearch's index files, the outbox);
 * this tightens what an older version left (vecsync.db was 0644). Best effort: an entry we may
 * not chmod is left as it is rather than stopping the service.
 */
export function makePrivate(dataDir: string): void {
  tighten(dataDir, false);
  for (const entry of OWN_ENTRIES) tighten(join(dataDir, entry), true);
}

function tighten(path: string, recurse: boolean): void {
  let stat;
  try {
    stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    chmodSync(path, stat.isDirectory() ? 0o700 : 0o600);
  } catch {
    return; // absent, or not ours to change
  }
  if (recurse && stat.isDirectory()) for (const entry of readdirSafe(path)) tighten(join(path, entry), true);
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
