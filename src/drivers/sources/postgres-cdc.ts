// Postgres CDC set-up and tear-down: a publication and a persistent pgoutput slot per synced
// table (named from the target's stream), and opening a replication stream at a checkpoint.
// The publication is created before the slot (a slot whose start predates its publication
// cannot decode it), and the slot before the backfill reads, so no change falls in between.
import type { Duplex } from "node:stream";
import postgres from "postgres";
import { DriverError } from "../../shared/errors.ts";
import { connectionOptions } from "./postgres-connect.ts";
import { toDriverError } from "./postgres-errors.ts";
import { ReplicationFeed } from "./postgres-feed.ts";
import { visibilityWait } from "./postgres-visibility.ts";
import type { PostgresSource } from "./postgres.ts";
import { SESSION_SETTINGS } from "./postgres-values.ts";
import { lsnToBigInt, lsnToString } from "./pgoutput.ts";
import { CdcFeedLostError, type CdcTarget, type ChangeStream } from "./types.ts";

/** Slot and publication name: `vecsync_` + the stream id, within Postgres' 63-byte limit. */
export function feedName(stream: string): string {
  return `vecsync_${stream.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63);
}

/** Deletes only carry replica-identity columns, so the synced key must be among them. */
async function checkReplicaIdentity(source: PostgresSource, target: CdcTarget, oid: number) {
  const [row] = await source.run("replica identity", (sql) => sql<{ ident: string; columns: string }[]>`
    SELECT c.relreplident::text AS ident, coalesce((
      SELECT json_agg(a.attname)::text FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = c.oid AND ((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))
    ), '[]') AS columns
    FROM pg_class c WHERE c.oid = ${oid}`);
  if (!row || row.ident === "f") return;
  const identity = JSON.parse(row.columns) as string[];
  const missing = target.pk.filter((c) => !identity.includes(c));
  if (row.ident === "n" || identity.length === 0 || missing.length > 0) {
    throw new DriverError(
      `table ${target.table} cannot be synced by CDC: its replica identity does not include ${target.pk.join(", ")}; ` +
        "give it a primary key on those columns or set REPLICA IDENTITY FULL",
      { retryable: false },
    );
  }
}

async function ensurePublication(source: PostgresSource, name: string, table: { schema: string; name: string; sql: string }) {
  await source.run("create publication", async (sql) => {
    const [existing] = await sql`SELECT 1 AS one FROM pg_publication WHERE pubname = ${name}`;
    if (!existing) {
      await sql.unsafe(`CREATE PUBLICATION "${name}" FOR TABLE ${table.sql}`).catch((err: { code?: string }) => {
        if (err.code !== "42710") throw err; // created meanwhile by a concurrent prepare
      });
      return;
    }
    const [member] = await sql`SELECT 1 AS one FROM pg_publication_tables
      WHERE pubname = ${name} AND schemaname = ${table.schema} AND tablename = ${table.name}`;
    if (!member) await sql.unsafe(`ALTER PUBLICATION "${name}" ADD TABLE ${table.sql}`);
  });
}

export async function prepareCdc(source: PostgresSource, target: CdcTarget): Promise<{ checkpoint: string }> {
  const table = await source.resolveTable(target.table);
  await checkReplicaIdentity(source, target, table.oid);
  const name = feedName(target.stream);
  await ensurePublication(source, name, table);
  return source.run("create replication slot", async (sql) => {
    try {
      const [slot] = await sql<{ lsn: string }[]>`SELECT lsn::text AS lsn FROM pg_create_logical_replication_slot(${name}, 'pgoutput')`;
      return { checkpoint: slot!.lsn };
    } catch (err) {
      if ((err as { code?: string }).code !== "42710") throw err;
      // The slot survives from an earlier prepare: resuming from where it stands loses nothing.
      const [slot] = await sql<{ lsn: string }[]>`
        SELECT coalesce(confirmed_flush_lsn, restart_lsn)::text AS lsn FROM pg_replication_slots WHERE slot_name = ${name}`;
      return { checkpoint: slot!.lsn };
    }
  });
}

export async function teardownCdc(source: PostgresSource, target: CdcTarget): Promise<void> {
  const name = feedName(target.stream);
  await source.run("drop replication slot", async (sql) => {
    for (let attempt = 0; ; attempt++) {
      // A consumer that died may still hold the slot for a moment; end its session first.
      await sql`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ${name} AND active_pid IS NOT NULL`;
      try {
        await sql`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ${name}`;
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== "55006" || attempt >= 20) throw err;
        await Bun.sleep(100);
      }
    }
    await sql.unsafe(`DROP PUBLICATION IF EXISTS "${name}"`);
  });
}

/**
 * Whether the feed can go on from `checkpoint`, else CdcFeedLostError saying why in words for
 * sync/status. Besides a missing slot or publication, two positions betray a feed that would
 * silently skip changes: the source's WAL behind what vecsync applied (the source was restored
 * from a backup: its new changes reuse positions vecsync thinks it has seen), and a slot ahead of
 * what vecsync recorded (vecsync only confirms what it stored, so someone else moved the slot, or
 * vecsync's own data was restored from a backup). A slot behind the checkpoint is normal: a crash
 * between storing a batch and confirming it.
 */
async function checkFeed(source: PostgresSource, name: string, checkpoint: bigint) {
  const [row] = await source.run("read replication slot", (sql) => sql<{ has_slot: boolean; wal_status: string | null; confirmed: string | null; has_publication: boolean; current: string }[]>`
    SELECT s.slot_name IS NOT NULL AS has_slot, s.wal_status, s.confirmed_flush_lsn::text AS confirmed,
      EXISTS (SELECT 1 FROM pg_publication WHERE pubname = ${name}) AS has_publication, pg_current_wal_lsn()::text AS current
    FROM (SELECT 1) one LEFT JOIN pg_replication_slots s ON s.slot_name = ${name} AND s.database = current_database()`);
  const { has_slot, wal_status, confirmed, has_publication, current } = row!;
  const applied = lsnToString(checkpoint);
  if (!has_slot) throw new CdcFeedLostError(`the replication slot "${name}" no longer exists on the source (dropped, or the source was restored from a backup)`);
  if (!has_publication) throw new CdcFeedLostError(`the publication "${name}" no longer exists on the source`);
  if (wal_status === "lost") throw new CdcFeedLostError(`the replication slot "${name}" lost WAL it still needed (the source removed it, see max_slot_wal_keep_size)`);
  if (lsnToBigInt(current) < checkpoint) {
    throw new CdcFeedLostError(`the source's WAL position ${current} is behind the position vecsync applied (${applied}): the source was restored from a backup`);
  }
  if (confirmed && lsnToBigInt(confirmed) > checkpoint) {
    throw new CdcFeedLostError(`the replication slot "${name}" is ahead of what vecsync applied (${confirmed} > ${applied}): it was advanced outside vecsync, or vecsync's data was restored from a backup`);
  }
}

/** Opens the replication stream; waits a few seconds for a slot a dead consumer still holds. */
export async function openChanges(source: PostgresSource, target: CdcTarget, checkpoint: string): Promise<ChangeStream> {
  const name = feedName(target.stream);
  const position = lsnToBigInt(checkpoint);
  const from = lsnToString(position); // validated: it goes into the command text
  await checkFeed(source, name, position);
  const sql = postgres({
    ...connectionOptions(source.credentials, { ...source.options, maxConnections: 1 }),
    idle_timeout: 0, // no idle or lifetime limit: the stream is one long query
    max_lifetime: null,
    prepare: false,
    connection: { ...SESSION_SETTINGS, replication: "database" },
  });
  const start = `START_REPLICATION SLOT "${name}" LOGICAL ${from} (proto_version '1', publication_names '"${name}"')`;
  for (let attempt = 0; ; attempt++) {
    try {
      // postgres.js types this as Writable; for CopyBoth (replication) it is a Duplex.
      const stream = (await sql.unsafe(start).writable()) as unknown as Duplex;
      return new ReplicationFeed(sql, stream, target.pk, from, source.credentials.password, visibilityWait(source));
    } catch (err) {
      const error = toDriverError(err, { password: source.credentials.password, operation: "start replication" });
      if ((err as { code?: string }).code === "55006" && attempt < 50) {
        await Bun.sleep(100);
        continue;
      }
      await sql.end({ timeout: 1 }).catch(() => {});
      throw error;
    }
  }
}
