// The rows left out of the collection (tables.ts `sync_empty_rows`), the sync engine's own record:
// those known to render empty text, and those that failed on their own (row-errors.ts). Read a
// page of keys at a time and written once per applied batch, never a query per row.
import { and, count, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { vectorTables } from "../vector-tables/tables.ts";
import { syncEmptyRows } from "./tables.ts";

/** Keys per statement: well under SQLite's limit on bound parameters. */
const CHUNK = 500;

const chunks = <T>(items: T[]): T[][] => Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

const of = (tableId: string, generation: number) => and(eq(syncEmptyRows.vectorTableId, tableId), eq(syncEmptyRows.generation, generation));

/** Which of `pks` are known to render empty, or to fail, in the generation: pk → the text hash they had. */
export async function emptyRowsAmong(db: Executor, tableId: string, generation: number, pks: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks(pks)) {
    const rows = await db.select({ pk: syncEmptyRows.pk, textHash: syncEmptyRows.textHash }).from(syncEmptyRows).where(and(of(tableId, generation), inArray(syncEmptyRows.pk, part)));
    for (const r of rows) out.set(r.pk, r.textHash);
  }
  return out;
}

/** Rows rendering empty (synced, with no vector); failed rows are not synced. */
export async function countEmptyRows(db: Executor, tableId: string, generation: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(syncEmptyRows).where(and(of(tableId, generation), isNull(syncEmptyRows.error)));
  return row?.n ?? 0;
}

/** A row that failed on its own (docs/vector-tables.md#row-errors), read at `at`. */
export type FailedRow = { pk: string; textHash: string; error: string; at: string };

export type EmptyRowChanges = { emptied: { pk: string; textHash: string }[]; failed?: FailedRow[]; cleared: string[] };

const key = [syncEmptyRows.vectorTableId, syncEmptyRows.generation, syncEmptyRows.pk];

/**
 * After the batch's vectors are stored: rows now rendering empty or failing are recorded, rows
 * that no longer do are not. A row failing again counts one attempt more and keeps when it first failed.
 */
export async function recordEmptyRows(db: Executor, tableId: string, generation: number, changes: EmptyRowChanges): Promise<void> {
  for (const part of chunks(changes.emptied)) {
    await db
      .insert(syncEmptyRows)
      .values(part.map((r) => ({ vectorTableId: tableId, generation, pk: r.pk, textHash: r.textHash })))
      .onConflictDoUpdate({ target: key, set: { textHash: sql`excluded.text_hash`, error: null, attempts: null, firstSeenAt: null, lastSeenAt: null } });
  }
  for (const part of chunks(changes.failed ?? [])) {
    await db
      .insert(syncEmptyRows)
      .values(part.map((r) => ({ vectorTableId: tableId, generation, pk: r.pk, textHash: r.textHash, error: r.error, attempts: 1, firstSeenAt: r.at, lastSeenAt: r.at })))
      .onConflictDoUpdate({
        target: key,
        set: {
          textHash: sql`excluded.text_hash`,
          error: sql`excluded.error`,
          attempts: sql`CASE WHEN ${syncEmptyRows.error} IS NULL THEN 1 ELSE ${syncEmptyRows.attempts} + 1 END`,
          firstSeenAt: sql`coalesce(${syncEmptyRows.firstSeenAt}, excluded.first_seen_at)`,
          lastSeenAt: sql`excluded.last_seen_at`,
        },
      });
  }
  for (const part of chunks(changes.cleared)) await db.delete(syncEmptyRows).where(and(of(tableId, generation), inArray(syncEmptyRows.pk, part)));
}

/** After a full pass: the rows the source no longer has are forgotten (`seen` = every source key). */
export async function keepSeenEmptyRows(db: Executor, tableId: string, generation: number, seen: Set<string>): Promise<void> {
  const rows = await db.select({ pk: syncEmptyRows.pk }).from(syncEmptyRows).where(of(tableId, generation));
  await recordEmptyRows(db, tableId, generation, { emptied: [], cleared: rows.map((r) => r.pk).filter((pk) => !seen.has(pk)) });
}

/** Every generation's rows but `generation`'s: after a swap, and before a new building generation is filled. */
export async function keepOnlyGeneration(db: Executor, tableId: string, generation: number): Promise<void> {
  await db.delete(syncEmptyRows).where(and(eq(syncEmptyRows.vectorTableId, tableId), ne(syncEmptyRows.generation, generation)));
}

/** In the transaction that deletes the vector table. */
export async function forgetEmptyRows(db: Executor, tableId: string): Promise<void> {
  await db.delete(syncEmptyRows).where(eq(syncEmptyRows.vectorTableId, tableId));
}

/** In the organization deletion's records transaction, before its vector tables' rows go. */
export async function forgetOrganizationEmptyRows(db: Executor, orgId: string): Promise<void> {
  const tables = db.select({ id: vectorTables.id }).from(vectorTables).where(eq(vectorTables.orgId, orgId));
  await db.delete(syncEmptyRows).where(inArray(syncEmptyRows.vectorTableId, tables));
}
