// Change feeds on the warehouse: the table's change tracking read with the CHANGES clause, from a
// stored timestamp. The stream polls the table's LAST_ALTERED (a metadata read, no warehouse
// compute while nothing changes); when it moved, the batch covers (position, LAST_ALTERED + 1 ms]
// — a deterministic end, so a batch read again from the same checkpoint is the same batch, and
// only once the warehouse clock has passed that end, so no commit can still land inside it.
// Batches are per poll, not per source transaction: CHANGES answers the net difference between
// two instants and says nothing of transaction boundaries.
import { CdcFeedLostError, type CdcTarget, type ChangeBatch, type ChangeStream, type Key, type StreamBacklog } from "./types.ts";
import { changesStatement, toSourceValue, type TableRef } from "./warehouse-sql.ts";
import type { QueryResult } from "./warehouse-connect.ts";

/** What the CDC code needs of the connector. */
export interface CdcHost {
  resolveTable(table: string): Promise<TableRef>;
  run(sql: string, binds: (string | number | boolean | null)[], operation: string): Promise<QueryResult>;
  pollMs: number;
  maxChangedKeys: number;
}

const PREFIX = "wh1:";

function parseCheckpoint(checkpoint: string): number {
  const ms = Number(checkpoint.startsWith(PREFIX) ? checkpoint.slice(PREFIX.length) : NaN);
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new CdcFeedLostError(`unreadable warehouse checkpoint ${JSON.stringify(checkpoint)}`);
  return ms;
}

const msOf = (value: unknown) => (value instanceof Date ? value.getTime() : Number.NaN);

/** LAST_ALTERED of the table and the warehouse's clock, both in ms since the epoch. */
async function clockAndLastAltered(host: CdcHost, ref: TableRef): Promise<{ lastAlteredMs: number; nowMs: number }> {
  const result = await host.run(
    "SELECT LAST_ALTERED, CURRENT_TIMESTAMP() FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
    [ref.schema, ref.name],
    `poll ${ref.name}`,
  );
  const row = result.rows[0];
  if (!row) throw new CdcFeedLostError(`table ${ref.schema}.${ref.name} no longer exists`);
  return { lastAlteredMs: Math.floor(msOf(row[0])), nowMs: Math.floor(msOf(row[1])) };
}

/**
 * Turns change tracking on (a table property, kept by the warehouse for the table's data
 * retention) and answers the warehouse's current time: every commit after it is in the feed.
 */
export async function prepareCdc(host: CdcHost, target: CdcTarget): Promise<{ checkpoint: string }> {
  const ref = await host.resolveTable(target.table);
  await host.run(`ALTER TABLE ${ref.sql} SET CHANGE_TRACKING = TRUE`, [], `enable change tracking on ${ref.name}`);
  const { nowMs } = await clockAndLastAltered(host, ref);
  return { checkpoint: `${PREFIX}${nowMs}` };
}

class WarehouseChangeStream implements ChangeStream {
  private positionMs: number;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly host: CdcHost,
    private readonly ref: TableRef,
    private readonly target: CdcTarget,
    startMs: number,
  ) {
    this.positionMs = startMs;
  }

  [Symbol.asyncIterator](): AsyncIterator<ChangeBatch> {
    return { next: () => this.next(), return: async () => ({ done: true, value: undefined }) };
  }

  private async next(): Promise<IteratorResult<ChangeBatch>> {
    while (!this.closed) {
      const batch = await this.poll();
      if (batch) return { done: false, value: batch };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.host.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return { done: true, value: undefined };
  }

  /** One poll: a batch, or null when nothing committed since the position (or nothing net). */
  private async poll(): Promise<ChangeBatch | null> {
    const { lastAlteredMs, nowMs } = await clockAndLastAltered(this.host, this.ref);
    const endMs = lastAlteredMs + 1;
    if (endMs <= this.positionMs || endMs >= nowMs) return null;
    const limit = this.host.maxChangedKeys;
    const statement = changesStatement(this.ref, this.target.pk, this.positionMs, endMs, limit + 1);
    const result = await this.host.run(statement.text, statement.binds, `changes ${this.ref.name}`);
    if (this.closed) return null;
    this.positionMs = endMs;
    const keys: Key[] = result.rows.map((row) => row.map((v, i) => toSourceValue(v, result.columns[i]!)) as Key);
    if (keys.length === 0) return null;
    const allRowsChanged = keys.length > limit;
    return { checkpoint: `${PREFIX}${endMs}`, keys: allRowsChanged ? [] : keys, allRowsChanged, committedAt: new Date(lastAlteredMs) };
  }

  /** Polled one batch at a time: nothing waits here, and the change tracking says no size. */
  backlog(): StreamBacklog {
    return { keys: 0, bytes: null };
  }

  /** Nothing to confirm at the source: the caller stores the checkpoint; retention bounds it. */
  async ack(checkpoint: string): Promise<void> {
    parseCheckpoint(checkpoint);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
  }
}

export async function openChanges(host: CdcHost, target: CdcTarget, checkpoint: string): Promise<ChangeStream> {
  const startMs = parseCheckpoint(checkpoint);
  const ref = await host.resolveTable(target.table);
  // Read once now, so a checkpoint past retention or before tracking fails here, not mid-stream.
  const probe = changesStatement(ref, target.pk, startMs, startMs, 1);
  await host.run(probe.text, probe.binds, `check feed of ${ref.name}`);
  return new WarehouseChangeStream(host, ref, target, startMs);
}
