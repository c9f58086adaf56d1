import { and, desc, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { AppError } from "../../shared/errors.ts";
import { rateEvents } from "./tables.ts";

// Sliding windows over `rate_events`: one row per counted event, so the limit holds across
// processes sharing the database and survives restarts.

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

export async function recordEvents(db: Db, keys: string[], now: Date): Promise<void> {
  await db.insert(rateEvents).values(keys.map((key) => ({ key, at: now.toISOString() })));
}

/** 429 `rate_limited` with `Retry-After` in whole seconds (docs/api.md#rate-limits). */
export function rateLimited(waitedMs: number, message: string): AppError {
  const seconds = Math.max(1, Math.ceil(waitedMs / 1000));
  return new AppError("rate_limited", message, { headers: { "retry-after": String(seconds) } });
}

/** Throws 429 when any window is full; the answer names the longest wait. */
export async function enforce(db: Db, windows: RateWindow[], now: Date, message: string): Promise<void> {
  const waits = await Promise.all(windows.map((w) => waitMs(db, w, now)));
  const longest = Math.max(0, ...waits);
  if (longest > 0) throw rateLimited(longest, message);
}
