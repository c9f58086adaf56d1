import { closeSync, fsyncSync, openSync } from "node:fs";

/** Flushes a file (or a folder's entries) to disk: a rename is durable only once its folder is synced. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
