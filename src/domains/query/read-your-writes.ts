// Read-your-writes on the query endpoint (CONTRACT 11, docs/vector-tables.md#read-your-writes):
// every answer carries `synced_through`; `min_synced_through` with `wait_ms` holds the query until
// the table has applied the source at least that far, else 409 `sync_behind`.
import type { Services } from "../../services.ts";
import { AppError, validationError } from "../../shared/errors.ts";
import { armProgress } from "../vector-tables/progress-signal.ts";
import { vectorTableOf } from "../vector-tables/service.ts";
import { parsePosition, positionKind, reached, syncedThrough, type PositionKind } from "../vector-tables/synced-through.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";

/**
 * While waiting, the row is read again at least this often, besides at every move this process
 * records: another process sharing the database (CONTRACT 12) records its cdc streams' and passes'
 * progress without waking this one. A read of one row by key; 400 ms keeps a wait of the full
 * 30 s under a hundred of them, and a move recorded elsewhere is seen within 0.4 s.
 */
const REREAD_MS = 400;

const FORMS: Record<PositionKind, string> = {
  lsn: 'a PostgreSQL WAL position (LSN) such as "0/16B3748": this is a cdc table on PostgreSQL',
  time: 'an ISO 8601 time with an offset, such as "2026-01-01T12:00:00Z": this table counts its sync in time',
};

/**
 * The row to answer from (read again when the query waited) and its `synced_through`. Without
 * `min_synced_through`, the row as given. A move recorded while waiting wakes the wait at once
 * (progress-signal.ts); the deadline is real time, as the client's wait is. The row is read once
 * more before a 409, so the answer says how far the table is now.
 */
export async function syncedRow(services: Services, row: VectorTableRow, ask: { min_synced_through?: string; wait_ms?: number }): Promise<{ row: VectorTableRow; syncedThrough: string | null }> {
  const kind = await positionKind(services, row);
  const through = syncedThrough(row, kind);
  if (ask.min_synced_through === undefined) return { row, syncedThrough: through };
  const min = parsePosition(kind, ask.min_synced_through);
  if (min === null) throw validationError([{ path: "min_synced_through", message: `must be ${FORMS[kind]}` }]);
  if (reached(kind, through, min)) return { row, syncedThrough: through };
  const deadline = performance.now() + (ask.wait_ms ?? 0);
  for (;;) {
    // Armed before the row is read, so a move recorded during the read still wakes the wait.
    const armed = armProgress(row.id, Math.max(0, Math.min(deadline - performance.now(), REREAD_MS)));
    try {
      const current = await vectorTableOf(services, row.orgId, row.id);
      const latest = syncedThrough(current, kind);
      if (reached(kind, latest, min)) return { row: current, syncedThrough: latest };
      if (performance.now() >= deadline) {
        throw new AppError("sync_behind", `The vector table has synced through ${latest ?? "nothing yet"}, not yet ${ask.min_synced_through}`, { details: { synced_through: latest } });
      }
      await armed.fired;
    } finally {
      armed.disarm();
    }
  }
}
