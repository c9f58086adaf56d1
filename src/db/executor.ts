import type { Db } from "./client.ts";

/** Either the database or an open transaction: the queries below run in both. */
export type Executor = Pick<Db, "select" | "insert" | "update" | "delete">;

/**
 * True when a write failed on a UNIQUE constraint (drizzle wraps the libSQL error as its cause).
 * Name checks run before inserts for a clear answer; this catches the race between two requests.
 */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/UNIQUE constraint failed/i.test(e.message)) return true;
  }
  return false;
}
