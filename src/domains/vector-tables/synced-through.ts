// How far a vector table has applied its source: a query answer's `synced_through` and what
// `min_synced_through` is compared with (CONTRACT 11, docs/vector-tables.md#read-your-writes).
// A cdc table on PostgreSQL counts in WAL positions (LSNs), every other table in time.
import type { Services } from "../../services.ts";
import { findConnection } from "../connections/repo.ts";
import type { VectorTableRow } from "./tables.ts";

/** `lsn`: a cdc table on PostgreSQL (its change stream's position); `time`: every other table. */
export type PositionKind = "lsn" | "time";

/** A parsed position: a WAL position, or milliseconds since the epoch. Compared within one kind. */
export type Position = bigint | number;

/**
 * Connection id → whether it is PostgreSQL. A connection's provider never changes, nor a table's
 * connection, so each is read once rather than on every query of a cdc table (a drizzle read is a
 * good part of a cheap query's CPU: docs/performance.md#what-a-request-costs). Bounded: cleared
 * past KNOWN_MAX ids (a deleted connection's entry is never asked again).
 */
const knownPostgres = new Map<string, boolean>();
const KNOWN_MAX = 10_000;

export async function positionKind(services: Services, row: VectorTableRow): Promise<PositionKind> {
  if (row.syncMode !== "cdc") return "time";
  let postgres = knownPostgres.get(row.connectionId);
  if (postgres === undefined) {
    const connection = await findConnection(services.database.db, row.orgId, row.connectionId);
    if (!connection) return "time";
    postgres = connection.provider === "db_relational";
    if (knownPostgres.size >= KNOWN_MAX) knownPostgres.clear();
    knownPostgres.set(row.connectionId, postgres);
  }
  return postgres ? "lsn" : "time";
}

// PostgreSQL's text form of an LSN: two 32-bit halves in hex (`%X/%X`, e.g. "0/16B3748").
const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;
// RFC 3339: seconds and an offset are required (a time without an offset means nothing here).
const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** The two forms `min_synced_through` may take (which one a table takes is checked by kind). */
export const POSITION_PATTERNS = { lsn: LSN, time: TIME } as const;

export function parseLsn(text: string): bigint | null {
  const m = LSN.exec(text);
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : null;
}

export const formatLsn = (lsn: bigint): string => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;

/**
 * Milliseconds since the epoch, or null for anything but a real RFC 3339 time (Feb 30 is refused,
 * which Date.parse would roll into March). Digits past the millisecond round up: a bound asked for
 * is never loosened.
 */
export function parseTime(text: string): number | null {
  const m = TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, fraction = "", zone] = m;
  const whole = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone!.toUpperCase()}`);
  const daysInMonth = new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate();
  if (!Number.isFinite(whole) || Number(d) > daysInMonth || Number(h) > 23) return null;
  return whole + Math.ceil(Number(fraction.padEnd(9, "0")) / 1e6);
}

export const parsePosition = (kind: PositionKind, text: string): Position | null => (kind === "lsn" ? parseLsn(text) : parseTime(text));

/**
 * The table's `synced_through`: every source change before it is in the stored vectors.
 *  - lsn: the change stream's applied position (`cdc_checkpoint`: stored after each applied batch,
 *    and for WAL of other tables, before the source is told). Null until a fill has completed (a
 *    first backfill holds only part of what precedes its feed's start) and while a recreated
 *    feed's hash pass is owed (its start is ahead of what is stored).
 *  - time: when the last completed pass started (backfill, re-backfill, batch or reconciling
 *    pass: `last_sync_started_at`); each reads the source after it started. Null before one.
 */
export function syncedThrough(row: VectorTableRow, kind: PositionKind): string | null {
  if (kind === "time") return row.lastSyncStartedAt === null ? null : new Date(row.lastSyncStartedAt).toISOString();
  if (row.lastSyncStartedAt === null || row.feedResyncReason !== null || row.cdcCheckpoint === null) return null;
  const lsn = parseLsn(row.cdcCheckpoint);
  return lsn === null ? null : formatLsn(lsn);
}

/** Whether `through` (a synced_through of `kind`) is at or past `min`; numerically, never as text. */
export function reached(kind: PositionKind, through: string | null, min: Position): boolean {
  if (through === null) return false;
  const at = parsePosition(kind, through);
  return at !== null && at >= min;
}
