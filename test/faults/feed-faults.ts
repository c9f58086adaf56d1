// The change-feed faults of a cdc world (issue 14, docs/day-two.md#lost-change-feed), done to the
// real source from outside, as an operator, a restart or a restore would: the slot dropped, the
// publication dropped, the slot advanced past what vecsync applied, the stream's walsender ended,
// every backend of the source database ended. Each is followed by the fault's `after` row changes
// (`write`), which the service must not lose. The shared Postgres server itself is never restarted.
import type postgres from "postgres";
import type { FeedFault } from "./schedule.ts";

type Sql = postgres.Sql;

/** How often an active slot is tried again: the consumer reconnects ~1 s after its stream broke. */
const SLOT_ATTEMPTS = 100;

/** Ends the walsender streaming `slot`, if one does; answers its pid or null. */
async function endWalsender(sql: Sql, slot: string): Promise<number | null> {
  const [row] = await sql<{ pid: number }[]>`
    SELECT active_pid AS pid, pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ${slot} AND active_pid IS NOT NULL`;
  return row?.pid ?? null;
}

/**
 * Waits (up to `ms`) for the consumer's stream on `slot`: a fault meant to break a live stream
 * lands right after a restart or a heal, while the consumer may still be opening it.
 */
async function streaming(sql: Sql, slot: string, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await sql`SELECT 1 AS one FROM pg_replication_slots WHERE slot_name = ${slot} AND active`).length) return true;
    if (Date.now() > deadline) return false;
    await Bun.sleep(50);
  }
}

/**
 * Runs `fn` on the slot with its walsender ended first, again while the consumer's reconnect takes
 * it back (55006: "replication slot … is active"). An active slot can be neither dropped nor advanced.
 */
async function onIdleSlot<T>(sql: Sql, slot: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    await endWalsender(sql, slot);
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: string }).code !== "55006" || attempt >= SLOT_ATTEMPTS) throw err;
      await Bun.sleep(20);
    }
  }
}

/**
 * Applies the fault to the source of `sql` (the world's database), then `write`; answers a line
 * for the log. `live`: the service runs (a stream to break may be on its way).
 */
export async function applyFeedFault(sql: Sql, slot: string, fault: FeedFault, live: boolean, write: () => Promise<string>): Promise<string> {
  switch (fault) {
    case "drop_slot": {
      const dropped = await onIdleSlot(sql, slot, () => sql`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ${slot}`);
      return `${dropped.length ? "slot dropped" : "no slot to drop"}; ${await write()}`;
    }
    case "drop_publication": {
      const [had] = await sql`SELECT 1 AS one FROM pg_publication WHERE pubname = ${slot}`;
      await sql.unsafe(`DROP PUBLICATION IF EXISTS "${slot}"`);
      return `${had ? "publication dropped" : "no publication to drop"}; ${await write()}`;
    }
    case "advance_slot": {
      // Stream broken first, so the changes below are committed while nobody reads them; then the
      // slot moves past them: they are skipped unless the service notices the slot ahead of it.
      if (live) await streaming(sql, slot);
      const pid = await endWalsender(sql, slot);
      const wrote = await write();
      const moved = await onIdleSlot(sql, slot, async () => {
        const [before] = await sql<{ lsn: string }[]>`SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = ${slot}`;
        if (!before) return null;
        const [after] = await sql<{ lsn: string }[]>`SELECT end_lsn::text AS lsn FROM pg_replication_slot_advance(${slot}, pg_current_wal_lsn())`;
        return `${before.lsn} → ${after!.lsn}`;
      });
      return `walsender ${pid ?? "(none)"} ended; ${wrote}; ${moved ? `slot advanced ${moved}` : "no slot to advance"}`;
    }
    case "terminate_walsender": {
      const pid = live && (await streaming(sql, slot)) ? await endWalsender(sql, slot) : null;
      return `${pid ? `walsender ${pid} ended` : "no walsender within 10 s"}; ${await write()}`;
    }
    case "terminate_backends": {
      // Every backend of the database but this one, the walsender included: what a restart does
      // to the service's connections. (The harness's own pooled connections reconnect by themselves.)
      const ended = await sql`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      return `${ended.length} backends ended; ${await write()}`;
    }
  }
}

/**
 * What sync/status's `last_error` must have said by the time a lost feed healed: what was lost,
 * then the account of the recreation and the hash pass (docs/day-two.md#lost-change-feed). The
 * slot's words also cover the walsender's own ("replication slot … does not exist") when it is
 * dropped between the service's check and its START_REPLICATION.
 */
export const HEAL_ACCOUNT: Partial<Record<FeedFault, RegExp>> = {
  drop_slot: /replication slot "vecsync_\w+" (no longer exists|does not exist).*recreated the change feed and resynchronized by hashes/,
  drop_publication: /publication.*recreated the change feed and resynchronized by hashes/,
  advance_slot: /ahead of what vecsync applied.*recreated the change feed and resynchronized by hashes/,
};
