import { and, desc, eq, gt, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { AppError } from "../../shared/errors.ts";
import { rateEvents } from "./tables.ts";

// Sliding windows over `rate_events`: one row per counted event, so the limit holds across
// processes sharing the database and survives restarts.
//
// A limit is taken in ONE statement: the event is recorded only if every window still has room,
// the counts and the insert running under the database's write lock. Checking with a read and
// recording with a later write let every call of a burst (a tRPC batch advances its calls in
// lockstep) pass the read before any write landed: 150 guesses of one code went through where
// 5 were allowed (docs/security.md#sign-in-limits).

export type RateWindow = { key: string; limit: number; windowMs: number };

/** Milliseconds until the window admits one more event; 0 when it admits one now. */
export async function waitMs(db: Db, window: RateWindow, now: Date): Promise<number> {
  const since = new Date(now.getTime() - window.windowMs).toISOString();
  // The limit-th newest event in the window: once it slides out, one more event fits.
  const [blocking] = await db
    .select({ at: rateEvents.at })
    .from(rateEvents)
    .where(and(eq(rateEvents.key, window.key), gt(rateEvents.at, since)))
    .orderBy(desc(rateEvents.at))
    .limit(1)
    .offset(window.limit - 1);
  if (!blocking) return 0;
  return Math.max(1, Date.parse(blocking.at) + window.windowMs - now.getTime());
}

/** 429 `rate_limited` with `Retry-After` in whole seconds (docs/security.md#sign-in-limits). */
export function rateLimited(waitedMs: number, message: string): AppError {
  const seconds = Math.max(1, Math.ceil(waitedMs / 1000));
  return new AppError("rate_limited", message, { headers: { "retry-after": String(seconds) } });
}

/** A window with its refusal message: the one a refused call is answered with. */
export type Limit = RateWindow & { message: string };

/** The events a successful `take` recorded, so that the caller can give them back. */
export type Taken = { ids: number[] };

/**
 * Records one event under every limit's key, or none when any window is full (then throws 429
 * naming the fullest window's wait). Atomic: concurrent calls can never together pass a limit.
 */
export async function take(db: Db, limits: Limit[], now: Date): Promise<Taken> {
  if (limits.length === 0) return { ids: [] };
  const at = now.toISOString();
  const keys = sql.join(limits.map((l) => sql`SELECT ${l.key} AS key`), sql` UNION ALL `);
  const room = sql.join(limits.map((l) => hasRoom(l, now)), sql` AND `);
  const rows = await db.all<{ id: number }>(sql`INSERT INTO rate_events (key, at) SELECT key, ${at} FROM (${keys}) WHERE ${room} RETURNING id`);
  if (rows.length === limits.length) return { ids: rows.map((r) => Number(r.id)) };
  const waits = await Promise.all(limits.map((l) => waitMs(db, l, now)));
  const longest = Math.max(...waits);
  const blocking = limits[waits.indexOf(longest)]!;
  throw rateLimited(Math.max(1, longest), blocking.message);
}

// Counts at most `limit` rows of the key's window (the index on (key, at) serves it).
function hasRoom(l: RateWindow, now: Date): SQL {
  const since = new Date(now.getTime() - l.windowMs).toISOString();
  return sql`(SELECT count(*) FROM (SELECT 1 FROM rate_events WHERE key = ${l.key} AND at > ${since} LIMIT ${l.limit})) < ${l.limit}`;
}

/** Gives back what `take` recorded: the attempt turned out not to count (a right code). */
export async function giveBack(db: Db, taken: Taken): Promise<void> {
  if (taken.ids.length) await db.delete(rateEvents).where(inArray(rateEvents.id, taken.ids));
}
