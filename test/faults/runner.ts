// One fault run: a world, its seeded schedule, a query loop throughout, and after every restart
// the checks of checker.ts. Cycle 0 kills the first backfill at a random point; each further
// cycle applies its workloads, interrupts the process, restarts it on the same data dir and
// checks. A process that cannot start ends the run (every later cycle would fail the same way).
import { checkServed, waitCaughtUp, type Finding } from "./checker.ts";
import { QueryLoop } from "./query-loop.ts";
import { describeCycle, schedule, type Interruption } from "./schedule.ts";
import { applyWorkload } from "./workload.ts";
import { FaultWorld } from "./world.ts";
import { must } from "../e2e/helpers.ts";

export type Failure = Finding & { seed: number; cycle: number };
export type Report = { seed: number; rows: number; cycles: number; restarts: number; kills: number; rowsChecked: number; queries: number; loopAnswers: number; failures: Failure[]; ms: number };
export type RunOptions = { seed: number; cycles: number; rows: number; catchUpMs?: number; log?: (line: string) => void };

/** CONTRACT 1: SIGTERM → exit 0 within 10 s. */
const SHUTDOWN_MS = 10_000;

export async function runSeed(opts: RunOptions): Promise<Report> {
  const t0 = Date.now();
  const log = opts.log ?? (() => {});
  // Kill delays span about the time a backfill of the table takes on this machine.
  const busyMs = Math.min(8_000, Math.max(1_000, Math.round(opts.rows * 0.6)));
  const catchUpMs = opts.catchUpMs ?? 60_000 + opts.rows * 3;
  const plan = schedule(opts.seed, opts.cycles, opts.rows, busyMs);
  const report: Report = { seed: opts.seed, rows: opts.rows, cycles: 0, restarts: 0, kills: 0, rowsChecked: 0, queries: 0, loopAnswers: 0, failures: [], ms: 0 };
  let cycle = 0;
  let phase = "provisioning";
  const fail = (kind: string, detail: string) => {
    report.failures.push({ seed: opts.seed, cycle, kind, detail });
    log(`  FAIL seed ${opts.seed} cycle ${cycle} ${kind}: ${detail.slice(0, 400)}`);
  };
  await using world = await FaultWorld.open(opts.rows);
  const loop = new QueryLoop({ url: () => world.url, key: () => world.key, tableId: () => world.tableId, phase: () => phase }, opts.seed);
  try {
    const first = await world.start();
    if (!first.ok) return (fail("failed_start", first.problem), report);
    await world.provision();
    must(await world.api.call("POST", `/v1/vector-tables/${world.tableId}/backfill`), 200);
    phase = "cycle 0: first backfill";
    log(`seed ${opts.seed}: ${opts.rows} rows, kill the first backfill after ${plan.firstKillMs} ms`);
    await Bun.sleep(plan.firstKillMs);
    await interrupt(world, { kind: "kill", delayMs: 0 }, fail);
    let lastWriteMs = Date.now();
    for (;;) {
      phase = `cycle ${cycle}: restart`;
      const started = await world.start();
      report.restarts++;
      if (!started.ok) return (fail("failed_start", started.problem), report);
      phase = `cycle ${cycle}: check`;
      const readyMs = Date.now();
      // Passes counted from now: after the restart, so after every write of the cycle.
      const waited = await waitCaughtUp(world.api, world.tableId, Math.max(lastWriteMs, Date.now()), catchUpMs);
      const caughtUpMs = Date.now();
      for (const f of waited) fail(f.kind, f.detail);
      if (!waited.some((f) => f.kind === "not_caught_up" || f.kind === "table_unreadable")) {
        const checked = await checkServed(world.api, world.pg.sql, world.tableId);
        report.rowsChecked += checked.rowsChecked;
        report.queries += checked.queries;
        reportFindings(checked.findings, fail);
        log(`  cycle ${cycle}: ready in ${started.ms} ms, caught up in ${caughtUpMs - readyMs} ms, ${checked.rowsChecked} rows checked in ${Date.now() - caughtUpMs} ms, ${checked.findings.length} findings`);
      }
      report.cycles = cycle;
      const next = plan.cycles[cycle];
      if (!next) break;
      cycle++;
      log(`  cycle ${cycle}: ${describeCycle(next)}`);
      phase = `cycle ${cycle}: workloads`;
      for (const w of next.workloads) {
        const line = await applyWorkload(world.pg.sql, { api: world.api, tableId: world.tableId }, w, opts.rows).catch((e) => (fail("workload_error", `${w.kind}: ${String(e)}`), "error"));
        log(`    ${line}`);
      }
      lastWriteMs = Date.now();
      phase = `cycle ${cycle}: ${next.interruption.kind}`;
      await interrupt(world, next.interruption, fail);
    }
    return report;
  } finally {
    phase = "done";
    await loop.stop();
    report.loopAnswers = loop.answered;
    const grouped = new Map<string, { n: number; body: string }>();
    for (const v of loop.violations) {
      const key = `${v.status} during ${v.phase}`;
      grouped.set(key, { n: (grouped.get(key)?.n ?? 0) + 1, body: grouped.get(key)?.body ?? v.body });
    }
    for (const [key, g] of grouped) report.failures.push({ seed: opts.seed, cycle: -1, kind: "query_not_contract", detail: `${g.n}× ${key}: ${g.body}` });
    report.kills = world.kills;
    report.restarts += world.restarts;
    report.ms = Date.now() - t0;
  }
}

/** Many rows can fail one way at once: one failure per kind, with a count and the first examples. */
function reportFindings(findings: Finding[], fail: (kind: string, detail: string) => void): void {
  const kinds = new Map<string, string[]>();
  for (const f of findings) kinds.set(f.kind, [...(kinds.get(f.kind) ?? []), f.detail]);
  for (const [kind, details] of kinds) fail(kind, `${details.length}×: ${details.slice(0, 3).join(" ; ")}`);
}

async function interrupt(world: FaultWorld, i: Interruption, fail: (kind: string, detail: string) => void): Promise<void> {
  const s = world.service;
  // The process must still be alive when we come to interrupt it: a native abort or segfault
  // after it started listening (issue 12, 8) shows here.
  if (s && !s.alive()) fail("process_died", `exit ${s.proc.exitCode ?? s.proc.signalCode} before the interruption; stderr: ${s.stderrTail().slice(-1500)}`);
  switch (i.kind) {
    case "sigterm": {
      s?.proc.kill("SIGTERM");
      const exited = await Promise.race([s?.proc.exited.then(() => true), Bun.sleep(SHUTDOWN_MS).then(() => false)]);
      if (!exited) fail("shutdown_slow", `no exit within ${SHUTDOWN_MS} ms of SIGTERM`);
      else if (s && s.proc.exitCode !== 0) fail("shutdown_exit", `SIGTERM → exit ${s.proc.exitCode ?? s.proc.signalCode}; stderr: ${s.stderrTail().slice(-800)}`);
      await world.stop("SIGKILL");
      return;
    }
    case "kill":
      await Bun.sleep(i.delayMs);
      await world.stop("SIGKILL");
      return;
    case "kill_in_checkpoint":
      s?.proc.kill("SIGTERM");
      await Bun.sleep(i.delayMs);
      await world.stop("SIGKILL");
      return;
    case "kill_in_startup":
      await world.stop("SIGKILL");
      for (const delay of i.delaysMs) {
        world.spawn();
        world.restarts++;
        await Bun.sleep(delay);
        await world.stop("SIGKILL");
      }
      return;
  }
}
