// The vector tables as the scrape-time gauges read them (docs/operability.md#metrics): the same
// numbers GET …/sync/status answers, for every table of every organization, by id only.
import type { Services } from "../../services.ts";
import type { TableReading } from "../../shared/metrics.ts";
import { syncStatusOf } from "./control.ts";
import { vectorTables } from "./tables.ts";

export async function tableReadings(services: Pick<Services, "database" | "clock">): Promise<TableReading[]> {
  const now = services.clock.now();
  const rows = await services.database.db.select().from(vectorTables);
  return rows.map((row) => {
    const status = syncStatusOf(row, now);
    const lag = row.syncMode === "cdc" ? row.sourceLagBytes : null;
    return { org_id: row.orgId, vector_table_id: row.id, sync_mode: row.syncMode, rows: row.syncedRows, rows_pending: status.rows_pending, staleness_seconds: status.staleness_secs, source_lag_bytes: lag };
  });
}
