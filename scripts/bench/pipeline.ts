// `bun run bench pipeline [--rows N] [--limit-min M] [--reconcile-rows N] [--only batch|cdc|reconcile] [--cdc-secs S] [--cdc-rates R,R,…] [--sweep-secs S] [--cdc-rows N] [--trace P] [--profile DIR] [--idle-wait-s S]`: the whole job end to end on the real service process, over
// its REST API, against a throwaway Postgres database of N rows (default 1,000,000) and the fake
// emb_a provider (test/fakes/embeddings/server.ts) with no latency and no rate limit, asked for
// text-embedding-3-small reduced to 256 dimensions. The fake rather than `local`: the fake is what
// "zero-latency provider" means — the real HTTP driver path (batching, requests in flight, JSON
// decoding) with no model cost, so the figures are the pipeline's own, and it counts every call.
//   1. backfill of a batch table: rows/s until synced, the service's peak RSS, and the ratio to
//      the source's own `COPY (SELECT …) TO STDOUT` of the same columns measured in this run, and
//      to raw usearch's build of the stored vectors; query latency while it runs (lib/pipeline-backfill.ts);
//   2. incremental batch sync: 1 % of rows' text updated while the table is paused, then resume
//      and time the one pass that follows; the fake must have received exactly the changed rows;
//   3. cdc: a second table with sync_mode cdc under 500 changes/s for --cdc-secs (default 60):
//      commit-to-queryable latency p50/p99 (defined in lib/pipeline-cdc.ts) after a 2 s warm-up
//      reported apart (the first changes after the backfill: the stream opening), then a sweep of the
//      --cdc-rates (default 1000,2000,3000,4000; --sweep-secs each, default 20) for the highest
//      rate that keeps p99 ≤ 1 s (lib/pipeline-cdc-phase.ts);
//   4. reconciliation: source rows read per hour by the reconciling passes of an idle cdc table of
//      --reconcile-rows rows (default 100,000, extrapolated per row to 1M; 0 skips), on a service of
//      its own with a 30 s reconcile interval, extrapolated to the 1 h default (lib/pipeline-reconcile.ts).
// Bounded: every wait has a deadline and the run stops at ~20 minutes (--limit-min; phase 4 gets at least 8 more). The database, the service
// and its data dir are removed at the end, also on failure or Ctrl-C.
// Uses VECSYNC_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres).
import postgres from "postgres";
import { join } from "node:path";
import { BUN, ROOT } from "../../test/harness.ts";
import type { FakeEmbeddings } from "../../test/fakes/embeddings/server.ts";
import { progress, table } from "./lib/measure.ts";
import { rawBuild, startProber } from "./lib/pipeline-backfill.ts";
import { cdcRows, cdcRowsNeeded, runCdcPhase } from "./lib/pipeline-cdc-phase.ts";
import { reconcileNote, reconcileRows, runReconcilePhase } from "./lib/pipeline-reconcile.ts";
import { Api, cpuSplit, mb, passTimes, procStatusKb, RssSampler, waitIdle, type Service } from "./lib/pipeline-service.ts";
import { COLUMNS, createSource, DIMS, MODEL, openSourceWorld, type SourceWorld, type TableView } from "./lib/source-world.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
/** `--only batch|cdc|reconcile`: that phase alone (the others and their source table skipped). */
const ONLY = arg("--only");
const ROWS = ONLY && ONLY !== "batch" ? 0 : Number(arg("--rows") ?? 1_000_000);
/** 100,000 rows by default, extrapolated to 1M: a second 1M-row backfill through the fake takes 10+ minutes on 2 cores. */
const RECONCILE = { rows: ONLY && ONLY !== "reconcile" ? 0 : Number(arg("--reconcile-rows") ?? 100_000), intervalSec: 30, passes: 2, budgetMs: 8 * 60_000 };
const CDC = {
  operatingRate: 500,
  operatingSecs: Number(arg("--cdc-secs") ?? 60),
  sweepRates: (arg("--cdc-rates") ?? "1000,2000,3000,4000").split(",").map(Number).filter((n) => n > 0),
  sweepSecs: Number(arg("--sweep-secs") ?? 20),
  rowsPerTxn: 10,
};
const CDC_ON = !ONLY || ONLY === "cdc";
/**
 * `--trace P`: the service logs at info to P.service.log, and P.slow.json lists each cdc run's
 * transactions slower than 250 ms (commit time, latency) to read beside that log.
 */
const TRACE = arg("--trace");
/**
 * `--smoke-max-p99-ms N`: a guard for CI (.ci/run): exit 1 when the cdc operating run's p99 passes
 * N ms or a transaction is never seen. Set ten times above the target, it catches a regression of
 * that order (the stream starved by queries: p50 6 s, p99 15 s at 500/s), not the machine's noise.
 */
const SMOKE_MAX_P99_MS = arg("--smoke-max-p99-ms") ? Number(arg("--smoke-max-p99-ms")) : null;
/**
 * `--profile DIR`: the service runs under Bun's CPU profiler and writes a markdown profile to DIR
 * when it stops; `--profile-json DIR` a .cpuprofile sampled every 250 µs instead, whose busy
 * stretches `bun run scripts/bench/holds.ts` lists (what held the event loop, in order).
 */
const PROFILE = arg("--profile") ?? arg("--profile-json");
const PROFILE_FLAGS = arg("--profile-json") ? ["--cpu-prof", "--cpu-prof-interval=250"] : ["--cpu-prof-md"];
/** `--cdc-rows`: the cdc table's size (default: what the load needs, and N/10 up to 100,000). */
const CDC_ROWS = CDC_ON ? Math.max(cdcRowsNeeded(CDC), Number(arg("--cdc-rows") ?? 0), Math.min(100_000, Math.ceil(ROWS / 10))) : 0;
const SYNC_INTERVAL_SEC = 10;
/** `--limit-min M` (default 20): the whole run's bound; a full 1M-row backfill needs ~30 on 2 cores. */
const RUN_LIMIT_MS = Number(arg("--limit-min") ?? 20) * 60_000;
/**
 * `--idle-wait-s S` (default 120): how long the probe of the filled table waits for the service to
 * go idle. 0 probes at once, during the stray sweep that follows a backfill (architecture.md, "Sharing the event loop").
 */
const IDLE_WAIT_MS = Number(arg("--idle-wait-s") ?? 120) * 1000;

const startedAt = Date.now();
const remaining = () => startedAt + RUN_LIMIT_MS - Date.now();
const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
const num = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");

/** A COPY to nowhere on a connection of its own (postgres.js can hang the next query on it). */
async function copyBaseline(url: string, select: string): Promise<{ rows: number; ms: number }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql`SELECT 1`;
  const t0 = performance.now();
  const stream = await sql.unsafe(`COPY (${select}) TO STDOUT`).readable();
  let rows = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
  }
  const ms = performance.now() - t0;
  await sql.end({ timeout: 0 });
  return { rows, ms };
}

/** Polls the table until it is `synced` (or `error`, or the deadline); answers when it saw so. */
async function waitSynced(api: Api, id: string, deadline: number, rss: RssSampler, pid: number, label: string): Promise<{ view: TableView; ms: number }> {
  const t0 = performance.now();
  let lastPrint = t0;
  for (;;) {
    const view = await api.call<TableView>("GET", `/v1/vector-tables/${id}`);
    const now = performance.now();
    if (view.sync_status === "synced" || view.sync_status === "error" || Date.now() > deadline) return { view, ms: now - t0 };
    if (now - lastPrint > 10_000) {
      lastPrint = now;
      const secs = (now - t0) / 1000;
      progress(`${label}: ${num(view.synced_rows)}/${num(view.total_rows)} rows, ${num(view.synced_rows / secs)} rows/s, RSS ${mb(procStatusKb(pid, "VmRSS"))} (peak so far ${mb(rss.phasePeakKb)})`);
    }
    await Bun.sleep(200);
  }
}


let world: SourceWorld | null = null;
let rss: RssSampler | null = null;
const cleanup = async () => {
  rss?.stop();
  await world?.cleanup();
};
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

const rowsOut: (string | number)[][] = [];
let smokeFailure: string | null = null;
const notes: string[] = [];
try {
  const t = performance.now();
  world = await openSourceWorld(
    async (sql) => {
      await createSource(sql, "docs", ROWS);
      await createSource(sql, "cdc_docs", CDC_ROWS, "rev integer");
      progress(`source: docs ${num(ROWS)} rows + cdc_docs ${num(CDC_ROWS)} rows generated in ${Math.round(performance.now() - t)} ms`);
    },
    {
      env: { VECSYNC_SYNC_INTERVAL: String(SYNC_INTERVAL_SEC), VECSYNC_LOG_LEVEL: TRACE ? "info" : "warn" },
      logTo: TRACE ? `${TRACE}.service.log` : undefined,
      cmd: PROFILE ? [BUN, ...PROFILE_FLAGS, `--cpu-prof-dir=${PROFILE}`, join(ROOT, "src/main.ts")] : undefined,
      // A profiled service writes its profile as it exits: give it the time its shutdown takes.
      stopWaitMs: PROFILE ? 60_000 : 5000,
    },
  );
  const { sql, fake, service, api, envApi, tableBody, sourceUrl } = world;
  rss = new RssSampler(service.pid);
  const idleKb = procStatusKb(service.pid, "VmRSS");
  progress(`service pid ${service.pid} at ${service.url}, RSS ${mb(idleKb)}; signed in, organization, connection, provider made over REST`);

  /** 1. Backfill of the batch table against COPY; 2. one incremental pass. */
  // Parameters, not the outer variables: a closure loses their narrowing to non-null.
  async function batchPhases(service: Service, sql: postgres.Sql, rss: RssSampler, fake: FakeEmbeddings): Promise<void> {
    const copy = await copyBaseline(sourceUrl.toString(), "SELECT id, title, body, category, price FROM docs");
    const copyRate = rate(copy.rows, copy.ms);
    progress(`COPY baseline: ${num(copy.rows)} rows in ${Math.round(copy.ms)} ms = ${num(copyRate)} rows/s`);

    // 1. Backfill.
    const batch = await envApi.call<TableView>("POST", "/v1/vector-tables", tableBody("bench-batch", "docs", COLUMNS, "batch"));
    rss.resetPhase();
    const before = { ...fake.counters };
    const cpuBefore = cpuSplit(service.pid);
    await api.call("POST", `/v1/vector-tables/${batch.id}/backfill`);
    const prober = startProber(api, batch.id);
    const filled = await waitSynced(api, batch.id, Date.now() + remaining() - 5 * 60_000, rss, service.pid, "backfill");
    const during = await prober.stop();
    const cpuAfter = cpuSplit(service.pid);
    // Paused at once so no sync pass starts before the incremental measurement (step 2).
    if (filled.view.sync_status === "synced") await api.call("POST", `/v1/vector-tables/${batch.id}/sync/pause`);
    const backfillRows = filled.view.sync_status === "synced" ? ROWS : filled.view.synced_rows;
    const backfillRate = rate(backfillRows, filled.ms);
    const calls = fake.counters.served - before.served;
    const inputs = fake.counters.inputs - before.inputs;
    rowsOut.push(
      ["backfill", `${num(backfillRate)} rows/s (${num(backfillRows)} rows, ${(filled.ms / 1000).toFixed(1)} s, ${filled.view.sync_status})`, `COPY ${num(copyRate)} rows/s`, `${((backfillRate / copyRate) * 100).toFixed(2)} % of COPY (1/${Math.round(copyRate / backfillRate)})`],
      ["  embedding calls", `${num(calls)} requests, ${num(inputs)} inputs (${(inputs / Math.max(1, calls)).toFixed(0)}/request)`, `${num(backfillRows)} rows`, `${(inputs / Math.max(1, backfillRows)).toFixed(3)} inputs/row`],
      ["  service peak RSS", `${mb(rss.phasePeakKb)} (sampled VmRSS); VmHWM ${mb(procStatusKb(service.pid, "VmHWM"))}`, `idle ${mb(idleKb)}`, `+${mb(rss.phasePeakKb - idleKb)}`],
    );
    // Where each row's CPU went: per 1,000 rows, in CPU seconds (2 cores: 2 s of CPU per wall second).
    const perK = (key: "service" | "bench" | "postgres") => ((cpuAfter[key] - cpuBefore[key]) * 1000) / Math.max(1, backfillRows);
    const cpuTotal = perK("service") + perK("bench") + perK("postgres");
    rowsOut.push([
      "  CPU per 1,000 rows",
      `service ${perK("service").toFixed(3)} s, fake provider + prober ${perK("bench").toFixed(3)} s, PostgreSQL ${perK("postgres").toFixed(3)} s`,
      `wall ${((filled.ms / 1000) * (1000 / Math.max(1, backfillRows))).toFixed(3)} s`,
      `${cpuTotal.toFixed(3)} CPU s (${((cpuTotal / ((filled.ms / 1000) * (1000 / Math.max(1, backfillRows)))) * 50).toFixed(0)} % of 2 cores)`,
    ]);
    progress(`backfill: ${filled.view.sync_status} after ${(filled.ms / 1000).toFixed(1)} s: ${num(backfillRate)} rows/s, peak RSS ${mb(rss.phasePeakKb)}`);
    // The same prober on the filled, idle table: what a query costs without a backfill beside it.
    // After a backfill the service sweeps its graph for strays (vector-store strays.ts): at 200k
    // rows that outlasts this wait, and the figure below then says so.
    const wentIdle = await waitIdle(service.pid, 1000, IDLE_WAIT_MS);
    const quiet = startProber(api, batch.id);
    await Bun.sleep(10_000);
    const idle = await quiet.stop();
    const ms = (n: number) => `${n.toFixed(1)} ms`;
    rowsOut.push([
      "  queries during backfill",
      `p50 ${ms(during.p50)}, p99 ${ms(during.p99)}, max ${ms(during.max)} (${num(during.count)} answered, ${during.errors} refused before rows)`,
      `filled table${wentIdle ? ", service idle" : ", service still sweeping"}: p50 ${ms(idle.p50)}, p99 ${ms(idle.p99)}`,
      `p99 ×${(during.p99 / idle.p99).toFixed(1)}`,
    ]);
    if (filled.view.sync_status === "synced") {
      progress("raw usearch build of the stored vectors (same parameters, same run)");
      // The service is stopped (SIGSTOP) while raw usearch builds: its sweep would otherwise share
      // the 2 cores with the baseline (1,206 rows/s beside it against 3,145 alone at 200k rows).
      process.kill(service.pid, "SIGSTOP");
      let raw: ReturnType<typeof rawBuild>;
      try {
        raw = rawBuild(service.dataDir, batch.id, "bench-batch", DIMS);
      } finally {
        process.kill(service.pid, "SIGCONT");
      }
      rowsOut.push(["  raw usearch build", `${num(raw.rate)} rows/s (${num(raw.rows)} rows, ${(raw.ms / 1000).toFixed(1)} s; ${((raw.cpuSeconds * 1000) / Math.max(1, raw.rows)).toFixed(3)} CPU s per 1,000 rows)`, `backfill ${num(backfillRate)} rows/s`, `backfill at ${((backfillRate / raw.rate) * 100).toFixed(0)} % of it`]);
    }

    // 2. Incremental batch sync of 1 % changed rows: one pass after resume.
    if (filled.view.sync_status === "synced" && remaining() > 4 * 60_000) {
      if (!(await waitIdle(service.pid))) notes.push("the service never went idle before the incremental update");
      const { count: changed } = await sql`UPDATE docs SET body = body || ' (edited)' WHERE id % 100 = 0`;
      await waitIdle(service.pid, 1000, 10_000);
      const idleStatus = await api.call("GET", `/v1/vector-tables/${batch.id}/sync/status`);
      const base = { ...fake.counters };
      rss.resetPhase();
      const resumedAt = Date.now();
      await api.call("POST", `/v1/vector-tables/${batch.id}/sync/resume`);
      let status = idleStatus;
      const deadline = Date.now() + Math.min(remaining() - 3 * 60_000, 5 * 60_000);
      while (status.last_sync_at === idleStatus.last_sync_at && Date.now() < deadline) {
        await Bun.sleep(100);
        status = await api.call("GET", `/v1/vector-tables/${batch.id}/sync/status`);
      }
      const seenAt = Date.now();
      await api.call("POST", `/v1/vector-tables/${batch.id}/sync/pause`); // keeps 1M-row passes out of the cdc phase
      const pass = passTimes(service.dataDir, batch.id);
      const passMs = pass.started && pass.finished ? Date.parse(pass.finished) - Date.parse(pass.started) : NaN;
      const passCalls = fake.counters.served - base.served;
      const passInputs = fake.counters.inputs - base.inputs;
      const exact = passInputs === changed ? "exact" : `MISMATCH (${passInputs} ≠ ${changed})`;
      rowsOut.push(
        ["batch pass, 1 % changed", `${(passMs / 1000).toFixed(2)} s pass (${num(rate(ROWS, passMs))} rows/s scanned)`, `backfill ${(filled.ms / 1000).toFixed(1)} s`, `${((passMs / filled.ms) * 100).toFixed(1)} % of backfill time`],
        ["  resume → synced seen", `${((seenAt - resumedAt) / 1000).toFixed(2)} s (includes ≤ ${SYNC_INTERVAL_SEC} s wait for the tick)`, "", ""],
        ["  embedding calls", `${num(passCalls)} requests, ${num(passInputs)} inputs`, `${num(changed)} rows changed`, exact],
        ["  service peak RSS", `${mb(rss.phasePeakKb)}`, "", ""],
      );
      progress(`incremental: pass ${(passMs / 1000).toFixed(2)} s, ${passInputs} inputs for ${changed} changed rows (${exact})`);
      await waitIdle(service.pid, 1000, 60_000);
    } else {
      notes.push(`incremental batch sync skipped: the backfill ended ${filled.view.sync_status} (time cap); the table was deleted to stop it`);
      await api.call("DELETE", `/v1/vector-tables/${batch.id}`);
      await waitIdle(service.pid, 1000, 60_000);
    }

  }

  // 1 and 2 (skipped by --only).
  if (ROWS > 0) await batchPhases(service, sql, rss, fake);

  // 3. CDC.
  if (CDC_ON && remaining() > 2 * 60_000) {
    const cdcColumns = [...COLUMNS, { name: "rev", role: "metadata", filter_type: "integer" }];
    const cdc = await envApi.call<TableView>("POST", "/v1/vector-tables", tableBody("bench-cdc", "cdc_docs", cdcColumns, "cdc"));
    await api.call("POST", `/v1/vector-tables/${cdc.id}/backfill`);
    const cdcFilled = await waitSynced(api, cdc.id, Date.now() + remaining() - 90_000, rss, service.pid, "cdc backfill");
    progress(`cdc table backfilled: ${cdcFilled.view.sync_status} in ${(cdcFilled.ms / 1000).toFixed(1)} s (${num(rate(CDC_ROWS, cdcFilled.ms))} rows/s)`);
    if (cdcFilled.view.sync_status === "synced") {
      await Bun.sleep(2000); // the consumer starts on the next second's tick
      rss.resetPhase();
      const phase = await runCdcPhase(sql, api, cdc.id, CDC_ROWS, CDC, () => fake.counters.inputs, startedAt + RUN_LIMIT_MS + 10 * 60_000);
      if (TRACE) await Bun.write(`${TRACE}.slow.json`, JSON.stringify(phase.runs.map((r) => ({ rate: r.rate, slow: r.result.slow }))));
      rowsOut.push(...cdcRows(phase), ["  service peak RSS", `${mb(rss.phasePeakKb)}`, "", ""]);
      for (const { rate: r, result } of phase.runs) {
        if (result.seen < result.txns) notes.push(`${r}/s: ${result.txns - result.seen} cdc transactions were not queryable within 30 s after the load ended`);
      }
      const operating = phase.runs[0]?.result;
      if (SMOKE_MAX_P99_MS !== null && (!operating || operating.p99 > SMOKE_MAX_P99_MS || operating.seen < operating.txns)) {
        smokeFailure = operating ? `cdc ${CDC.operatingRate}/s: p99 ${num(operating.p99)} ms (limit ${SMOKE_MAX_P99_MS}), ${operating.seen}/${operating.txns} seen` : "no cdc run";
      }
    } else notes.push(`cdc phase skipped: the cdc table ended ${cdcFilled.view.sync_status}`);
  } else if (CDC_ON) notes.push("cdc phase skipped: out of time");
  if (SMOKE_MAX_P99_MS !== null && CDC_ON && !smokeFailure && !rowsOut.some((r) => String(r[0]).startsWith("cdc "))) smokeFailure = "the cdc phase did not run";

  // 4. Reconciliation of an idle cdc table.
  if (RECONCILE.rows > 0) {
    const body = (connectionId: string, providerId: string) => ({ ...tableBody("", "", COLUMNS, "cdc"), connection_id: connectionId, embedding_provider_id: providerId });
    const r = await runReconcilePhase({ sql, sourceUrl, fake, ...RECONCILE, deadline: Date.now() + Math.max(remaining() - 30_000, RECONCILE.budgetMs), tableBody: body });
    if ("skipped" in r) notes.push(`reconcile phase: ${r.skipped}`);
    else {
      rowsOut.push(...reconcileRows(r, RECONCILE.intervalSec));
      const note = reconcileNote(r);
      if (note) notes.push(note);
    }
  }

  console.log(`\npipeline bench: ${num(ROWS)} rows (cdc table ${num(CDC_ROWS)}), fake emb_a ${MODEL}@${DIMS} with no latency, VECSYNC_SYNC_INTERVAL=${SYNC_INTERVAL_SEC}, run ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  console.log(table(["phase", "figure", "baseline (same run)", "ratio"], rowsOut));
  console.log(`service VmHWM over the whole run: ${mb(procStatusKb(service.pid, "VmHWM"))}`);
  for (const n of notes) console.log(`note: ${n}`);
  if (smokeFailure) {
    console.log(`SMOKE FAILED: ${smokeFailure}`);
    process.exitCode = 1;
  } else if (SMOKE_MAX_P99_MS !== null) console.log(`smoke passed: cdc p99 within ${SMOKE_MAX_P99_MS} ms, every transaction seen`);
} finally {
  await cleanup();
  }
