// Named queries over the sync history (`sync_passes`, tables.ts); no rules. The rules (what a
// pass records, when it ends, how many are kept) are history.ts's.
import { and, desc, eq, inArray, lt, lte, or } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import { beforePosition, type PageRequest } from "../../shared/pagination.ts";
import { syncPasses, type PassKind, type SyncPassRow } from "./tables.ts";

export async function insertPass(db: Executor, row: SyncPassRow): Promise<void> {
  await db.insert(syncPasses).values(row);
}

/** Writes a pass's end: its status, counts and error (only a `running` row: an ended pass stays as it ended). */
export async function updatePass(db: Executor, id: string, end: Partial<SyncPassRow>): Promise<void> {
  await db
    .update(syncPasses)
    .set(end)
    .where(and(eq(syncPasses.id, id), eq(syncPasses.status, "running")));
}

/** Every `running` entry of the table among `kinds` closed as failed with `error`; answers how many. */
export async function failRunningPasses(db: Executor, tableId: string, kinds: readonly PassKind[], error: string, at: string): Promise<number> {
  const rows = await db
    .update(syncPasses)
    .set({ status: "failed", finishedAt: at, error })
    .where(and(eq(syncPasses.vectorTableId, tableId), eq(syncPasses.status, "running"), inArray(syncPasses.kind, [...kinds])))
    .returning({ id: syncPasses.id });
  return rows.length;
}

const newestFirst = [desc(syncPasses.startedAt), desc(syncPasses.id)];

/**
 * Deletes all but the table's `keep` newest entries (started_at, then id). The cut is found
 * through the index, one row read, so a prune costs the same at 1,001 entries as at 100,000.
 */
export async function prunePasses(db: Executor, tableId: string, keep: number): Promise<void> {
  const [cut] = await db
    .select({ startedAt: syncPasses.startedAt, id: syncPasses.id })
    .from(syncPasses)
    .where(eq(syncPasses.vectorTableId, tableId))
    .orderBy(...newestFirst)
    .limit(1)
    .offset(keep);
  if (!cut) return;
  const atOrBefore = or(lt(syncPasses.startedAt, cut.startedAt), and(eq(syncPasses.startedAt, cut.startedAt), lte(syncPasses.id, cut.id)));
  await db.delete(syncPasses).where(and(eq(syncPasses.vectorTableId, tableId), atOrBefore));
}

/** A page of the table's history, newest first, `limit + 1` rows (the extra one says more exist). */
export function pagePasses(db: Executor, tableId: string, page: PageRequest): Promise<SyncPassRow[]> {
  return db
    .select()
    .from(syncPasses)
    .where(and(eq(syncPasses.vectorTableId, tableId), beforePosition(syncPasses.startedAt, syncPasses.id, page.after)))
    .orderBy(...newestFirst)
    .limit(page.limit + 1);
}

/** In the transaction that deletes the vector table. */
export async function forgetPasses(db: Executor, tableId: string): Promise<void> {
  await db.delete(syncPasses).where(eq(syncPasses.vectorTableId, tableId));
}

/** In the organization deletion's records transaction. */
export async function forgetOrganizationPasses(db: Executor, orgId: string): Promise<void> {
  await db.delete(syncPasses).where(eq(syncPasses.orgId, orgId));
}
