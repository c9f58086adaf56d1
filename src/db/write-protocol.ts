// What fast-writes.ts and its thread (write-worker.ts) say to each other, and where the thread is found.
import type { RawResult } from "./statement-cache.ts";

/**
 * The thread's entry point, relative to `src/`. Under `bun run` it is resolved next to this file;
 * in the compiled binary, Bun looks it up among the binary's entry points by this path, relative
 * to their common root (`src/`): scripts/build.ts lists it and checks that it still exists.
 */
export const WRITE_WORKER_ENTRY = "db/write-worker.ts";

export type WriteRequest =
  | { kind: "batch"; id: number; path: string; busyTimeoutMs: number; stmts: { sql: string; args: unknown[] }[] }
  | { kind: "close" };

/** `size`, `bytes`: the thread's statement cache after the batch. Not ok: rolled back, the connection closed. */
export type WriteReply = ({ id: number; ok: true; results: RawResult[] } | { id: number; ok: false; message: string }) & { size: number; bytes: number };

/** The worker as `bun run` finds it (beside this file) or as the compiled binary does. */
export function writeWorkerUrl(): string | URL {
  return import.meta.url.startsWith("file:///$bunfs/") ? `./${WRITE_WORKER_ENTRY}` : new URL("./write-worker.ts", import.meta.url);
}
