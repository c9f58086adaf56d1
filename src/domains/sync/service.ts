// The sync domain's API (docs/vector-tables.md#sync-history, #sync-now, #row-errors): a table's pass
// history, a pass started by hand, and the rows that failed on their own. The pass is the periodic one (batch.ts): the same slot, so a tick
// and a request never run two passes of a table at once, and the same code, history included.
import type { Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { pageRequest, toPage, type Page, type PageQuery } from "../../shared/pagination.ts";
import { findVectorTableById } from "../vector-tables/repo.ts";
import { vectorTableOf } from "../vector-tables/service.ts";
import { hasStorage, servesConfig } from "../vector-tables/state.ts";
import { storageFailure, tableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { claimPass, hasActiveBackfill, passEligible, passKind, runPass } from "./batch.ts";
import { startPass, type Pass } from "./history.ts";
import { pagePasses } from "./repo.ts";
import { pageRowErrors } from "./row-errors.ts";
import type { RowError, SyncPass, SyncStarted } from "./schemas.ts";
import { syncState } from "./state.ts";
import type { LeftOutRow, SyncPassRow } from "./tables.ts";

export function presentPass(row: SyncPassRow): SyncPass {
  return {
    id: row.id,
    vector_table_id: row.vectorTableId,
    kind: row.kind,
    status: row.status,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
    rows_scanned: row.rowsScanned,
    rows_embedded: row.rowsEmbedded,
    rows_metadata_only: row.rowsMetadataOnly,
    rows_deleted: row.rowsDeleted,
    rows_unchanged: row.rowsUnchanged,
    tokens: row.tokens,
    error: row.error,
  };
}

/** GET /v1/vector-tables/{id}/sync/history: any permission; newest first, cursor pages bound to the table. */
export async function listSyncHistory(services: Services, actor: KeyActor, id: string, query: PageQuery): Promise<Page<SyncPass>> {
  const table = await vectorTableOf(services, actor.orgId, id);
  const scope = `sync-history:${actor.orgId}:${table.id}`;
  const page = pageRequest(services.config.masterKey, scope, query);
  const rows = await pagePasses(services.database.db, table.id, page);
  return toPage(services.config.masterKey, scope, page, rows, (r) => ({ createdAt: r.startedAt, id: r.id }), presentPass);
}

const syncRunning = (message: string) => new AppError("sync_running", message);

/** Why a pass cannot start now, or null. In the order a user can act on: paused, busy, not ready. */
function refusal(table: VectorTableRow): AppError | null {
  const details = { sync_status: table.syncStatus };
  if (table.syncStatus === "paused") return new AppError("already_paused", "Sync of this vector table is paused; resume it to sync");
  if (table.syncStatus === "backfilling" || table.syncStatus === "pending_rebackfill") {
    return syncRunning("A backfill or re-backfill of this vector table is pending or running; it brings the table up to date when it completes");
  }
  if (passEligible(table)) return null;
  if (!hasStorage(table)) return new AppError("vector_table_not_ready", "The vector table has no storage to sync yet; its backfill creates it (POST …/backfill)", { details });
  if (!servesConfig(table)) {
    return new AppError("vector_table_not_ready", "The stored vectors were built for an earlier configuration of this table; POST …/backfill builds the current one", { details });
  }
  return new AppError("vector_table_not_ready", "The vector table has not been backfilled yet; POST …/backfill first", { details });
}

/**
 * POST /v1/vector-tables/{id}/sync (a `full` key): starts the table's pass now — a batch pass, or
 * for a cdc table a reconciling one — and answers once its history entry exists, without waiting
 * for it. 409 `sync_running` while a pass or a fill of the table is pending or running,
 * `already_paused` when paused, `vector_table_not_ready` before the first backfill.
 */
export async function startSync(services: Services, actor: KeyActor, id: string): Promise<SyncStarted> {
  requireWriteAccess(actor);
  const { id: tableId } = await vectorTableOf(services, actor.orgId, id);
  // The slot first, synchronously: of a tick and requests arriving together exactly one runs.
  const release = claimPass(services, tableId);
  if (!release) throw syncRunning("A sync pass of this vector table is running");
  let table: VectorTableRow | undefined;
  let pass: Pass;
  try {
    // Read again holding the slot: what is checked is what the pass runs on.
    table = await findVectorTableById(services.database.db, tableId);
    if (!table) throw notFound("Vector table");
    const refused = refusal(table) ?? ((await hasActiveBackfill(services, table.id)) ? syncRunning("A backfill of this vector table is pending or running") : null);
    if (refused) throw refused;
    pass = await startPass(services, table, passKind(table));
  } catch (err) {
    release();
    throw err;
  }
  // A reconciling pass counts as the interval's attempt: the tick does not start another one right after.
  if (table.syncMode === "cdc") syncState(services).reconcileAttempts.set(table.id, services.clock.now().getTime());
  services.logger.info({ org_id: actor.orgId, vector_table_id: table.id, pass_id: pass.id, kind: pass.kind }, "sync pass requested");
  // Its outcome is recorded on the table and in its history entry by the pass itself.
  void runPass(services, table, pass)
    .catch(() => {})
    .finally(release);
  return { vector_table_id: table.id, pass_id: pass.id };
}

/**
 * GET /v1/vector-tables/{id}/errors: any permission; the rows of the served generation that failed
 * on their own (row-errors.ts), first failed first, cursor pages bound to the table.
 */
export async function listRowErrors(services: Services, actor: KeyActor, id: string, query: PageQuery): Promise<Page<RowError>> {
  const table = await vectorTableOf(services, actor.orgId, id);
  const scope = `row-errors:${actor.orgId}:${table.id}`;
  const page = pageRequest(services.config.masterKey, scope, query);
  let rows: LeftOutRow[] = [];
  if (hasStorage(table)) {
    const generation = await tableStore(services, table)
      .then((store) => store.generations())
      .catch((err: unknown) => Promise.reject(table.mode === "platform" ? storageFailure(err, table.connectionId) : err));
    rows = await pageRowErrors(services.database.db, table.id, generation.live, page);
  }
  return toPage(services.config.masterKey, scope, page, rows, (r) => ({ createdAt: r.firstSeenAt!, id: r.pk }), presentRowError);
}

const presentRowError = (row: LeftOutRow): RowError => ({ pk: row.pk, error: row.error!, attempts: row.attempts!, first_seen_at: row.firstSeenAt!, last_seen_at: row.lastSeenAt! });
