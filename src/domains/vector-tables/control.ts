// Backfill and sync control (docs/vector-tables.md#states). These endpoints only move the
// table's state and queue work; the engine (the sync domain) does the work and keeps the numbers,
// reached through `services.engine` (engine.ts), since sync imports this domain, not the reverse.
import type { Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { AppError } from "../../shared/errors.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import type { FillPayload } from "../tasks/kinds.ts";
import type { BackfillStarted, SyncControlResult, SyncStatusObject } from "./schemas.ts";
import { vectorTableOf } from "./service.ts";
import { markBackfillQueued, pauseTable, resumeTable } from "./state.ts";
import type { VectorTableRow } from "./tables.ts";
import { backfillKey } from "./update.ts";
import { BACKFILL } from "../tasks/kinds.ts";

const backfillRunning = () => new AppError("backfill_running", "A backfill or rebackfill of this vector table is already pending or running");

/**
 * POST /v1/vector-tables/{id}/backfill: queues a `backfill` and sets `backfilling` in one
 * transaction. The unique index over active tasks makes exactly one of many simultaneous
 * requests win, in one process or several; the others answer 409 `backfill_running`. After a
 * backfill that failed for good it resumes from that task's checkpoint; after a re-backfill that
 * failed, the task builds a new generation for the current configuration (the engine sees the
 * live generation does not serve it), never writing the live one.
 */
export async function startBackfill(services: Services, actor: KeyActor, id: string): Promise<BackfillStarted> {
  requireWriteAccess(actor);
  const row = await vectorTableOf(services, actor.orgId, id);
  const payload: FillPayload = { vector_table_id: row.id, config_version: row.configVersion };
  const now = services.clock.now().toISOString();
  try {
    await services.database.db.transaction(async (tx) => {
      const progress = await services.engine.resumePoint(tx, row);
      await services.tasks.enqueue(tx, BACKFILL, { orgId: row.orgId, targetId: row.id, payload, exclusiveKey: backfillKey(row.id), progress });
      await markBackfillQueued(tx, row.orgId, row.id, now);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw backfillRunning();
    throw err;
  }
  services.logger.info({ org_id: actor.orgId, vector_table_id: id }, "backfill queued");
  // total_rows is counted by the task when it starts; until then the last known numbers.
  return { vector_table_id: row.id, status: "backfilling", total_rows: row.totalRows, synced_rows: row.syncedRows };
}

const secondsSince = (now: Date, iso: string | null): number => (iso === null ? 0 : Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000)));

/**
 * The sync status object with its fields' meanings (docs/vector-tables.md#sync-status), read from what the engine keeps on the row.
 * `rows_pending` is the engine's number as it is (during a backfill it writes total − synced): the
 * counters are computed in one place, sync/counters.ts.
 */
export function syncStatusOf(row: VectorTableRow, now: Date): SyncStatusObject {
  // cdc: age of the oldest change not yet applied (0 when caught up); batch: since the start of
  // the last completed pass (0 before the first).
  const staleness = row.syncMode === "cdc" ? secondsSince(now, row.oldestPendingChangeAt) : secondsSince(now, row.lastSyncStartedAt);
  return {
    vector_table_id: row.id,
    sync_status: row.syncStatus,
    last_sync_at: row.lastSyncAt,
    rows_pending: row.rowsPending,
    staleness_secs: staleness,
    last_error: row.lastError,
    last_error_at: row.lastErrorAt,
  };
}

/** GET /v1/vector-tables/{id}/sync/status: any permission. */
export async function getSyncStatus(services: Services, actor: KeyActor, id: string): Promise<SyncStatusObject> {
  return syncStatusOf(await vectorTableOf(services, actor.orgId, id), services.clock.now());
}

/** POST …/sync/pause: from any state but `paused` (409 `already_paused`); queries keep working. */
export async function pauseSync(services: Services, actor: KeyActor, id: string): Promise<SyncControlResult> {
  requireWriteAccess(actor);
  const row = await vectorTableOf(services, actor.orgId, id);
  const moved = await pauseTable(services.database.db, actor.orgId, row.id, services.clock.now().toISOString());
  if (!moved) throw new AppError("already_paused", "Sync of this vector table is already paused");
  services.logger.info({ org_id: actor.orgId, vector_table_id: id, from: row.syncStatus }, "sync paused");
  return { vector_table_id: row.id, sync_status: "paused", message: "Sync paused; queries keep answering from the stored vectors. Resume to catch up on source changes." };
}

/** POST …/sync/resume: only from `paused` (else 409 `not_paused`); the next pass catches up. */
export async function resumeSync(services: Services, actor: KeyActor, id: string): Promise<SyncControlResult> {
  requireWriteAccess(actor);
  const row = await vectorTableOf(services, actor.orgId, id);
  const moved = await resumeTable(services.database.db, actor.orgId, row.id, services.clock.now().toISOString());
  if (!moved) throw new AppError("not_paused", `Sync of this vector table is not paused (it is ${row.syncStatus})`);
  // A cdc table's consumer starts now rather than at the next tick; a batch table waits for its pass.
  services.engine.resumed({ ...row, syncStatus: "synced" });
  services.logger.info({ org_id: actor.orgId, vector_table_id: id }, "sync resumed");
  return { vector_table_id: row.id, sync_status: "synced", message: "Sync resumed; changes made while paused are picked up by the next pass." };
}
