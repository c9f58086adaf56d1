// The reconciliation phase of `bun run bench pipeline`: source rows read by the reconciling passes
// of an idle cdc table (healthy stream, nothing changing). A service of its own (own data dir)
// runs with VECSYNC_SYNC_INTERVAL=1, so the sync tick looks at the table every second, and a short
// VECSYNC_RECONCILE_INTERVAL, so a few passes fit in the run. Rows read are Postgres' own count
// for the table (pg_stat_user_tables seq_tup_read + idx_tup_fetch, read once the counts stopped
// moving: a backend publishes them when it goes idle or ends), over a window from the end of the
// first pass after the backfill to the end of the `passes`th pass after it; passes are counted by
// `last_sync_started_at` in the service's database. Rows per pass × passes per hour is the figure;
// at the 1 h default, one pass an hour. Fewer rows than 1M are extrapolated per row (a pass reads
// each row's hashes once), and the output says so.
import type postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeEmbeddings } from "../../../test/fakes/embeddings/server.ts";
import { progress } from "./measure.ts";
import { passTimes, signUp, startService, type Api, type Service } from "./pipeline-service.ts";

export type ReconcileOptions = {
  sql: postgres.Sql;
  sourceUrl: URL;
  fake: FakeEmbeddings;
  rows: number;
  intervalSec: number;
  passes: number;
  /** Epoch ms by which the phase must end (the backfill is abandoned past it). */
  deadline: number;
  tableBody: (connectionId: string, providerId: string) => object;
};

export type ReconcileResult = {
  rows: number;
  backfillMs: number;
  passes: number;
  windowMs: number;
  rowsRead: number;
  meanPassMs: number;
  inputs: number;
};

const SOURCE = "idle_docs";
const HOUR_SEC = 3600;

async function tableReads(sql: postgres.Sql): Promise<number> {
  const [row] = await sql`SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE relname = ${SOURCE}`;
  return Number(row?.n ?? 0);
}

/** The table's read count once it held still for `quietMs` (pending backend counts published). */
async function settledReads(sql: postgres.Sql, quietMs = 2500): Promise<number> {
  let last = await tableReads(sql);
  for (;;) {
    await Bun.sleep(quietMs);
    const now = await tableReads(sql);
    if (now === last) return now;
    last = now;
  }
}


/** The next completed pass after the one that started at `after` (polled in the service's database). */
async function nextPass(dataDir: string, id: string, after: string | null, deadline: number): Promise<{ started: string; ms: number } | null> {
  while (Date.now() < deadline) {
    const t = passTimes(dataDir, id);
    if (t.started && t.started !== after && t.finished && t.finished >= t.started) return { started: t.started, ms: Date.parse(t.finished) - Date.parse(t.started) };
    await Bun.sleep(250);
  }
  return null;
}

async function createIdleSource(sql: postgres.Sql, rows: number): Promise<void> {
  await sql.unsafe(`CREATE TABLE ${SOURCE} (id bigint PRIMARY KEY, title text, body text, category text, price double precision);
    INSERT INTO ${SOURCE} SELECT g, 'Item ' || g, 'A description of item ' || g || ': ' || md5(g::text), 'cat' || (g % 20), (g % 10000) / 100.0
    FROM generate_series(1, ${rows}) g`);
  await sql.unsafe(`VACUUM ANALYZE ${SOURCE}`);
}

async function waitSynced(api: Api, id: string, deadline: number): Promise<string> {
  for (;;) {
    const view = await api.call<{ sync_status: string; synced_rows: number; total_rows: number }>("GET", `/v1/vector-tables/${id}`);
    if (view.sync_status === "synced" || view.sync_status === "error" || Date.now() > deadline) return view.sync_status;
    await Bun.sleep(500);
  }
}

export async function runReconcilePhase(opts: ReconcileOptions): Promise<ReconcileResult | { skipped: string }> {
  const { sql, fake } = opts;
  await createIdleSource(sql, opts.rows);
  const dataDir = mkdtempSync(join(tmpdir(), "vecsync-bench-reconcile-"));
  let service: Service | null = null;
  let api: Api | null = null;
  let tableId: string | null = null;
  try {
    service = await startService(
      { VECSYNC_EMB_A_URL: fake.url, VECSYNC_SYNC_INTERVAL: "1", VECSYNC_RECONCILE_INTERVAL: String(opts.intervalSec), VECSYNC_FREE_VECTOR_BUDGET: "100000000", VECSYNC_LOG_LEVEL: "warn" },
      dataDir,
    );
    ({ api } = await signUp(service));
    const user = decodeURIComponent(opts.sourceUrl.username) || "postgres";
    const connection = await api.call("POST", "/v1/providers/db_relational/connections", {
      name: "bench-reconcile",
      mode: "managed",
      credentials: { host: opts.sourceUrl.hostname, port: Number(opts.sourceUrl.port || 5432), database: opts.sourceUrl.pathname.slice(1), user, password: decodeURIComponent(opts.sourceUrl.password) || "unused-trust-auth", ssl_mode: "disable" },
    });
    const envApi = api.withHeaders({ "x-environment-id": connection.environment_id });
    const provider = await envApi.call("POST", "/v1/embedding-providers", { name: "fake-emb-a", provider: "emb_a", api_key: fake.apiKey });
    const table = await envApi.call("POST", "/v1/vector-tables", { ...opts.tableBody(connection.id, provider.id), name: "bench-idle-cdc", source_table: SOURCE, sync_mode: "cdc" });
    tableId = table.id as string;
    const t0 = performance.now();
    await api.call("POST", `/v1/vector-tables/${tableId}/backfill`);
    const status = await waitSynced(api, tableId, opts.deadline);
    const backfillMs = performance.now() - t0;
    if (status !== "synced") return { skipped: `the idle cdc table's backfill of ${opts.rows} rows ended ${status} after ${(backfillMs / 1000).toFixed(0)} s` };
    progress(`reconcile: idle cdc table of ${opts.rows} rows backfilled in ${(backfillMs / 1000).toFixed(1)} s; counting reads over ${opts.passes} passes at a ${opts.intervalSec} s interval`);

    // The window starts after the first pass (due at once when the backfill took longer than the interval).
    const first = await nextPass(dataDir, tableId, passTimes(dataDir, tableId).started, opts.deadline);
    if (!first) return { skipped: "no reconcile pass before the deadline" };
    const before = await settledReads(sql);
    const inputs = fake.counters.inputs;
    const windowStart = performance.now();
    let seen = first.started;
    let passMs = 0;
    for (let passes = 0; passes < opts.passes; passes++) {
      const pass = await nextPass(dataDir, tableId, seen, opts.deadline);
      if (!pass) return { skipped: `only ${passes} of ${opts.passes} reconcile passes before the deadline` };
      seen = pass.started;
      passMs += pass.ms;
      progress(`reconcile: pass ${passes + 1} took ${pass.ms} ms`);
    }
    const rowsRead = (await settledReads(sql)) - before;
    return { rows: opts.rows, backfillMs, passes: opts.passes, windowMs: performance.now() - windowStart, rowsRead, meanPassMs: passMs / opts.passes, inputs: fake.counters.inputs - inputs };
  } finally {
    if (api && tableId) await api.call("DELETE", `/v1/vector-tables/${tableId}`).catch(() => {}); // frees the slot
    if (service) {
      await Promise.race([service.stop("SIGTERM"), Bun.sleep(5000)]);
      await Promise.resolve(service[Symbol.asyncDispose]()).catch(() => {});
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Why the figure is extrapolated, when it is. */
export function reconcileNote(r: ReconcileResult): string | null {
  if (r.rows >= 1_000_000) return null;
  const rate = r.rows / (r.backfillMs / 1000);
  return `reconcile phase measured on ${num(r.rows)} rows, not 1M, and extrapolated per row: its backfill through the fake ran at ${num(rate)} rows/s here, so 1M rows would take ~${Math.round(1_000_000 / rate / 60)} min (--reconcile-rows 1000000 runs it)`;
}

const num = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");

/** The report's rows: the figure at the 1 h default, and how it was derived. */
export function reconcileRows(r: ReconcileResult, intervalSec: number, syncIntervalDefaultSec = 60): (string | number)[][] {
  const perPass = r.rowsRead / r.passes;
  const atDefault = perPass; // VECSYNC_RECONCILE_INTERVAL's default, 3600 s: one pass an hour
  const scale = 1_000_000 / r.rows;
  const perMillion = r.rows === 1_000_000 ? "" : ` (×${scale.toFixed(1)} per row for 1M rows: ${num(atDefault * scale)} rows/hour)`;
  return [
    ["reconcile, idle cdc table", `${num(atDefault)} source rows read/hour at the 1 h default${perMillion}`, `${num(r.rows)} rows: target 1 pass/hour`, `${(perPass / r.rows).toFixed(3)} table reads/pass`],
    ["  measured", `${num(r.rowsRead)} rows read in ${r.passes} passes over ${(r.windowMs / 1000).toFixed(0)} s at VECSYNC_RECONCILE_INTERVAL=${intervalSec}, sync tick every 1 s`, `pg_stat_user_tables`, `${num(perPass)} rows/pass, ${(r.meanPassMs / 1000).toFixed(1)} s/pass`],
    ["  derived", `rows/pass × 1 pass/hour (3600 s interval); ${num(r.inputs)} embedding inputs in the window`, `a pass every ${syncIntervalDefaultSec} s sync interval (before): ${num(perPass * (HOUR_SEC / syncIntervalDefaultSec))} rows/hour`, ""],
  ];
}
