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

/**
 * A failure for good (or one that keeps coming back): `error` with the message and its time. In
 * the transaction that fails the task when given one.
 */
export async function markError(services: Services, id: string, message: string, db: DbOrTx = services.database.db): Promise<void> {
  const now = services.clock.now().toISOString();
  await setStatusUnlessPaused(db, services, id, "error", { lastError: message, lastErrorAt: now });
}

/** Records a failure without changing the status (the task still retries). */
export async function noteError(services: Services, id: string, message: string): Promise<void> {
  await updateTable(services.database.db, services, id, { lastError: message, lastErrorAt: services.clock.now().toISOString() });
}

/** Thrown inside the finishing transaction to roll it back: a PUT moved the configuration. */
class ConfigMoved extends Error {}

/**
 * Ends a fill: the task `completed` and the table `synced` (unless paused) with its numbers, in
 * one transaction, so no reader ever sees one without the other (issue 12). The task is completed
 * first, fenced by its lease; the table only if the configuration is still the one built, else
 * both roll back and the answer is false (the caller then builds the new configuration). The
 * live generation now holds `configVersion`'s vectors: `served_config_version` says so.
 */
export async function finishFill(services: Services, complete: (tx: DbOrTx) => Promise<void>, id: string, configVersion: number, changes: Changes): Promise<boolean> {
  try {
    await services.database.db.transaction(async (tx) => {
      await complete(tx);
      const rows = await tx
        .update(vectorTables)
        .set({ ...changes, servedConfigVersion: configVersion, syncStatus: sql`CASE WHEN ${vectorTables.syncStatus} = 'paused' THEN 'paused' ELSE 'synced' END`, updatedAt: services.clock.now().toISOString() })
        .where(and(eq(vectorTables.id, id), eq(vectorTables.configVersion, configVersion)))
        .returning({ id: vectorTables.id });
      if (rows.length === 0) throw new ConfigMoved();
    });
    return true;
  } catch (err) {
    if (err instanceof ConfigMoved) return false;
    throw err;
  }
}
