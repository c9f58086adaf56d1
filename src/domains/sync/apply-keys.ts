// Bringing some rows, known by key, in line with the source as it is now: their hashes read by key
// (an absent key was deleted), then `prepareRows` as for any hash page, all under the table's
// write lock (state.ts withWriteLock). The change stream applies each batch this way, so the rows
// it stores carry their real source hashes and a later pass finds them unchanged; a hash pass
// applies the rows it found changed, and re-checks the stored rows it did not see, this way too.
import type { Key } from "../../drivers/sources/types.ts";
import { keyText } from "../../drivers/sources/types.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { prepareRows, writeRows, type ApplyCounts, type ApplyTarget } from "./apply.ts";
import type { SyncJob } from "./job.ts";
import { recordEmptyRows } from "./empty-rows.ts";
import { withWriteLock } from "./state.ts";

/** `present`: the row ids of the keys the source still has; `handled`: keys fully applied (sync/counters.ts). */
export type KeysApplied = { counts: ApplyCounts; overBudget: number; handled: number; present: Set<string> };

export function applyKeys(job: SyncJob, keys: Key[], target: ApplyTarget, opts: { signal?: AbortSignal } = {}): Promise<KeysApplied> {
  // Sync work: the store's background steps wait for it as for a request (shared/foreground.ts).
  return job.services.foreground.syncing(() => withWriteLock(job.services, job.table.id, async () => {
    const { table } = job;
    const hashes = await job.source.hashesByKeys({ table: table.sourceTable, pk: [table.primaryKeyColumn], textColumns: job.textColumns, metaColumns: job.metaColumns, keys });
    const prepared = await prepareRows(job, hashes, target, opts);
    await prepared.commit(writeRows(job));
    // prepareRows deletes only rows it finds gone between its hash read and its fetch; a key
    // absent from the hash read is never handed to it.
    const present = new Set(hashes.map((h) => keyText(h.key)));
    const absent = keys.map(keyText).filter((pk) => !present.has(pk));
    if (absent.length > 0) {
      prepared.counts.deleted += await job.store.delete(absent, { generation: target.generation });
      await recordEmptyRows(job.services.database.db, table.id, target.generation, { emptied: [], cleared: absent });
    }
    return { counts: prepared.counts, overBudget: prepared.overBudget, handled: prepared.handled + absent.length, present };
  }));
}

/**
 * The source key of a stored row id (keyText's inverse for a one-column key): a number when the
 * key column is numeric and the id a safe integer, as the drivers read such keys; else the text
 * (numeric and big integer keys are read as text too).
 */
export function storedKey(table: Pick<VectorTableRow, "numericPk">, pk: string): Key {
  const n = Number(pk);
  return [table.numericPk && /^-?\d+$/.test(pk) && Number.isSafeInteger(n) ? n : pk];
}
