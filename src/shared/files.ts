import { closeSync, fsyncSync, openSync } from "node:fs";
import { open } from "node:fs/promises";

/** Flushes a file (or a folder's entries) to disk: a rename is durable only once its folder is synced. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `fsyncPath` off the event loop (a checkpoint's index file: tens of ms at 100k rows). */
export async function fsyncPathAsync(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
