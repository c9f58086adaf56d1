// `vecsync status`: every vector table of the key's organization (or of one environment) with its
// state, rows, backlog and staleness, from GET /v1/vector-tables and each table's sync/status.
import { mapLimited, ServiceClient } from "./api.ts";
import { CLIENT_FLAGS, clientOptions, flagsOf } from "./options.ts";
import { age, count, table, truncate } from "./render.ts";

export type VectorTable = {
  id: string;
  name: string;
  environment_id: string;
  sync_status: string;
  sync_mode: string;
  mode: string;
  total_rows: number;
  synced_rows: number;
};

export type SyncStatus = {
  vector_table_id: string;
  sync_status: string;
  last_sync_at: string | null;
  rows_pending: number;
  staleness_secs: number;
  last_error: string | null;
  last_error_at: string | null;
};

export type TableStatus = { vector_table: VectorTable; sync: SyncStatus };

export const STATUS_HELP = `usage: vecsync status [--json] [--url URL] [--api-key KEY] [--environment ID]

The vector tables of the API key's organization: state, rows synced of the source's rows,
changes pending, staleness (time since the last completed pass; for cdc, the age of the oldest
change not yet applied) and sync mode. --json prints the answers as they came.

  --url URL          VECSYNC_URL, default http://127.0.0.1:8080
  --api-key KEY      VECSYNC_API_KEY (prefer the variable: flags show in ps)
  --environment ID   VECSYNC_ENVIRONMENT_ID: only that environment's tables`;

/** Sync reads at once: enough to hide round trips, few enough not to crowd the service. */
const CONCURRENT_READS = 8;

export async function readStatus(client: ServiceClient): Promise<TableStatus[]> {
  const tables = await client.all<VectorTable>("/v1/vector-tables");
  const statuses = await mapLimited(tables, CONCURRENT_READS, (t) => client.get<SyncStatus>(`/v1/vector-tables/${encodeURIComponent(t.id)}/sync/status`));
  return tables.map((vector_table, i) => ({ vector_table, sync: statuses[i]! }));
}

function staleness(s: SyncStatus): string {
  // batch: since the last completed pass, which never happened before the first one (CONTRACT 6).
  if (s.last_sync_at === null && s.staleness_secs === 0) return "-";
  return age(s.staleness_secs);
}

export function renderStatus(rows: TableStatus[]): string[] {
  if (!rows.length) return ["no vector tables"];
  const lines = table(
    ["NAME", "ID", "STATE", "ROWS (SYNCED/TOTAL)", "PENDING", "STALENESS", "SYNC"],
    rows.map(({ vector_table: t, sync: s }) => [
      truncate(t.name, 40),
      t.id,
      s.sync_status,
      `${count(t.synced_rows)}/${count(t.total_rows)}`,
      count(s.rows_pending),
      staleness(s),
      t.sync_mode,
    ]),
  );
  const errors = rows.filter((r) => r.sync.last_error);
  if (errors.length) {
    lines.push("", "last errors:");
    for (const { vector_table: t, sync: s } of errors) lines.push(`  ${t.name}: ${s.last_error!.replace(/\s+/g, " ")}${s.last_error_at ? ` (${s.last_error_at})` : ""}`);
  }
  return lines;
}

export async function runStatus(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const flags = flagsOf(args, { strings: CLIENT_FLAGS, booleans: ["json", "help"] });
  if (flags.booleans.has("help")) {
    console.log(STATUS_HELP);
    return 0;
  }
  const client = new ServiceClient(clientOptions(flags, env));
  const rows = await readStatus(client);
  if (flags.booleans.has("json")) console.log(JSON.stringify({ data: rows }, null, 2));
  else console.log(renderStatus(rows).join("\n"));
  return 0;
}
