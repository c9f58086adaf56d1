// A vector table's row counts (`total_rows`, `synced_rows`, `rows_pending`; docs/vector-tables.md#counters),
// computed here and nowhere else, from what is true when they are written rather than from what
// a step meant to do (issue 14):
//  - synced_rows: the live generation's stored vectors plus its rows known to render empty
//    (empty-rows.ts). During a re-backfill, the live generation's, not the one being built.
//  - total_rows: the source rows the last fill or pass read; for cdc, after every applied change
//    batch, the stored rows, since the stream has then brought the collection to the source as of
//    the applied position (so a TRUNCATE and re-insert shows at once, not at the next pass).
//  - rows_pending: the known backlog. A fill: total_rows − synced_rows. A batch pass: the changed
//    rows it found and has not applied, while it runs or retries and after it failed. cdc: the keys
//    the stream delivered or holds decoded that are not applied yet; the bytes of the source's log
//    past the applied position go beside them (source_lag_bytes, for what is not decoded yet).
// Every write of these numbers (vector-tables/state.ts transitions) takes them from here.
import type { ChangeBatch, StreamBacklog } from "../../drivers/sources/types.ts";
import type { Services } from "../../services.ts";
import type { PendingChanges, RowCounts } from "../vector-tables/state.ts";
import type { TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { countEmptyRows } from "./empty-rows.ts";

type Table = Pick<VectorTableRow, "id">;

/** What a pass found: changed rows seen so far and how many of them are applied (stored). */
export type PassTally = { found: number; applied: number };

export const newTally = (): PassTally => ({ found: 0, applied: 0 });

/** `synced_rows`: the live generation's vectors plus its rows known to render empty. */
export async function storedRows(services: Services, store: TableStore, table: Table): Promise<number> {
  const { live } = await store.generations();
  return (await store.count()) + (await countEmptyRows(services.database.db, table.id, live));
}

/** While a backfill runs (at its start and at every checkpoint): the source's count, and the rest is pending. */
export async function fillCounts(services: Services, store: TableStore, table: Table, sourceRows: number): Promise<RowCounts> {
  const synced = await storedRows(services, store, table);
  return { totalRows: sourceRows, syncedRows: synced, rowsPending: Math.max(0, sourceRows - synced) };
}

/** A fill completed over `sourceRows` rows: nothing it found is left. */
export async function completedCounts(services: Services, store: TableStore, table: Table, sourceRows: number): Promise<RowCounts> {
  return { totalRows: sourceRows, syncedRows: await storedRows(services, store, table), rowsPending: 0 };
}

/** A pass completed over `sourceRows` rows; a cdc table's backlog is the stream's, so a reconciling pass leaves rows_pending. */
export async function passCounts(services: Services, store: TableStore, table: Table & Pick<VectorTableRow, "syncMode">, sourceRows: number): Promise<Partial<RowCounts>> {
  const counts = await completedCounts(services, store, table, sourceRows);
  return table.syncMode === "batch" ? counts : { totalRows: counts.totalRows, syncedRows: counts.syncedRows };
}

/**
 * A pass failed: what it stored counts, and for a batch table the changed rows it found and did
 * not apply are the backlog (a cdc table's backlog stays the stream's).
 */
export async function failedPassCounts(services: Services, store: TableStore, table: Table & Pick<VectorTableRow, "syncMode">, tally: PassTally): Promise<Partial<RowCounts>> {
  const syncedRows = await storedRows(services, store, table);
  return table.syncMode === "batch" ? { syncedRows, rowsPending: Math.max(0, tally.found - tally.applied) } : { syncedRows };
}

/** cdc: the keys a delivered batch changed and those the stream holds behind it, pending until applied. */
export const streamPending = (batch: ChangeBatch, behind: StreamBacklog): PendingChanges => ({
  rows: batch.keys.length + behind.keys,
  oldestAt: batch.committedAt.toISOString(),
  lagBytes: behind.bytes,
});

/** cdc: a batch is applied (or a hash pass resynced the table): the collection is the source as of the applied position. */
export async function streamCounts(services: Services, store: TableStore, table: Table): Promise<RowCounts> {
  const stored = await storedRows(services, store, table);
  return { totalRows: stored, syncedRows: stored, rowsPending: 0 };
}
