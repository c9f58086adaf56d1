// The sync bookkeeping on the vector_tables row (SPEC 2.12 sync/status reads it). Every write
// re-checks the status it expects in its WHERE clause, so a pause or a delete that lands between
// a read and this write is never overwritten.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Services } from "../../services.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import { vectorTables, type SyncStatus } from "../vector-tables/tables.ts";

type Changes = Partial<typeof vectorTables.$inferInsert>;

export async function updateTable(db: DbOrTx, services: Services, id: string, changes: Changes, onlyFrom?: SyncStatus[]): Promise<void> {
  const where = onlyFrom ? and(eq(vectorTables.id, id), inArray(vectorTables.syncStatus, onlyFrom)) : eq(vectorTables.id, id);
  await db.update(vectorTables).set({ ...changes, updatedAt: services.clock.now().toISOString() }).where(where);
}

/** Sets the status unless the table is paused (a paused table stays paused, issue 7 design). */
export async function setStatusUnlessPaused(db: DbOrTx, services: Services, id: string, status: SyncStatus, changes: Changes = {}): Promise<void> {
  await db
    .update(vectorTables)
    .set({ ...changes, syncStatus: sql`CASE WHEN ${vectorTables.syncStatus} = 'paused' THEN 'paused' ELSE ${status} END`, updatedAt: services.clock.now().toISOString() })
    .where(eq(vectorTables.id, id));
}

/** A failure for good (or one that keeps coming back): `error` with the message and its time. */
export async function markError(services: Services, id: string, message: string): Promise<void> {
  const now = services.clock.now().toISOString();
  await setStatusUnlessPaused(services.database.db, services, id, "error", { lastError: message, lastErrorAt: now });
}

/** Records a failure without changing the status (the task still retries). */
export async function noteError(services: Services, id: string, message: string): Promise<void> {
  await updateTable(services.database.db, services, id, { lastError: message, lastErrorAt: services.clock.now().toISOString() });
}

/**
 * Marks a fill finished (`synced` unless paused) only if the configuration is still the one
 * built; false when a PUT moved it meanwhile (the caller then builds the new one).
 */
export async function finishIfVersion(services: Services, id: string, configVersion: number, changes: Changes): Promise<boolean> {
  const rows = await services.database.db
    .update(vectorTables)
    .set({ ...changes, syncStatus: sql`CASE WHEN ${vectorTables.syncStatus} = 'paused' THEN 'paused' ELSE 'synced' END`, updatedAt: services.clock.now().toISOString() })
    .where(and(eq(vectorTables.id, id), eq(vectorTables.configVersion, configVersion)))
    .returning({ id: vectorTables.id });
  return rows.length > 0;
}
