// One seeded fault run: a world, its schedule (schedule.ts), and after every restart the checks
// of checker.ts (through run.ts). Cycle 0 kills the first backfill at a random point; each further
// cycle applies its workloads, interrupts the process, restarts it on the same data dir and
// checks. In a cdc world (`cdc`) an interruption may instead be a fault of the change feed
// (feed-faults.ts), done while the process runs and checked without a restart: it must heal by
// itself. A process that cannot start ends the run (every later cycle would fail the same way).
import { must } from "../e2e/helpers.ts";
import { applyFeedFault, HEAL_ACCOUNT } from "./feed-faults.ts";
import { Run, type Report } from "./run.ts";
import { describeCycle, isFeedFault, schedule, type Interruption, type Workload } from "./schedule.ts";
import { applyWorkload } from "./workload.ts";
import { FaultWorld } from "./world.ts";

export type { Failure, Report } from "./run.ts";
/** `compact`: the service keeps no f32 vectors in memory (VECSYNC_FLOAT_MIRROR_MB=0; docs/architecture.md#compact-mirror). */
export type RunOptions = { seed: number; cycles: number; rows: number; cdc?: boolean; compact?: boolean; catchUpMs?: number; log?: (line: string) => void };

/** docs/running.md#shutdown: SIGTERM → exit 0 within 10 s. */
const SHUTDOWN_MS = 10_000;

/** Kill delays span about the time a backfill of the table takes on this machine (~0.5 ms a row). */
export const busyMsOf = (rows: number) => Math.min(8_000, Math.max(1_000, Math.round(rows * 0.6)));
export const catchUpMsOf = (rows: number) => 60_000 + rows * 3;

export async function runSeed(opts: RunOptions): Promise<Report> {
  const plan = schedule(opts.seed, opts.cycles, opts.rows, busyMsOf(opts.rows), opts.cdc);
  await using world = await FaultWorld.open(opts.rows, { cdc: opts.cdc, compact: opts.compact });
  const run = new Run(world, opts.seed, opts.catchUpMs ?? catchUpMsOf(opts.rows), opts.log ?? (() => {}));
  try {
    const first = await world.start();
    if (!first.ok) return (run.fail("failed_start", first.problem), run.report);
    await world.provision();
    must(await world.api.call("POST", `/v1/vector-tables/${world.tableId}/backfill`), 200);
    run.phase = "cycle 0: first backfill";
    const at = Math.floor(plan.firstKillAt * opts.rows);
    const seen = await untilSynced(run, at);
    run.log(`seed ${opts.seed}: ${opts.rows} rows${world.cdc ? " cdc" : ""}, first backfill killed at ${seen} synced rows (aimed at ${at})`);
    let restart = await interrupt(run, { kind: "kill", delayMs: 0 });
    for (;;) {
      const label = `cycle ${run.cycle}`;
      if (!(await (restart ? run.restartAndCheck(label) : run.healAndCheck(label)))) break;
      run.report.cycles = run.cycle;
      const next = plan.cycles[run.cycle];
      if (!next) break;
      run.cycle++;
      run.log(`  cycle ${run.cycle}: ${describeCycle(next)}`);
      run.phase = `cycle ${run.cycle}: workloads`;
      for (const line of await applyWorkloads(run, next.workloads)) run.log(`    ${line}`);
      run.phase = `cycle ${run.cycle}: ${next.interruption.kind}`;
      restart = await interrupt(run, next.interruption);
    }
    return run.report;
  } finally {
    await run.finish();
  }
}

/** Polls synced_rows until it reaches `rows` or the table leaves `backfilling`; answers what it saw. */
async function untilSynced(run: Run, rows: number): Promise<number> {
  const deadline = Date.now() + run.catchUpMs;
  for (;;) {
    const table = await run.world.api.call("GET", `/v1/vector-tables/${run.world.tableId}`).catch(() => null);
    const synced = table?.body?.synced_rows ?? 0;
    if (!table || synced >= rows || table.body.sync_status !== "backfilling" || Date.now() > deadline) return synced;
    await Bun.sleep(10);
  }
}

/** Applies workloads in order; answers a line each for the log (a failing one is a finding). */
async function applyWorkloads(run: Run, workloads: Workload[]): Promise<string[]> {
  const lines: string[] = [];
  for (const w of workloads) {
    const target = { api: run.world.api, tableId: run.world.tableId };
    lines.push(await applyWorkload(run.world.pg.sql, target, w, run.world.rows).catch((e) => (run.fail("workload_error", `${w.kind}: ${String(e)}`), "error")));
  }
  return lines;
}

/** SIGTERM, and the exit 0 within 10 s it must bring (docs/running.md#shutdown). */
async function sigterm(run: Run): Promise<void> {
  const world = run.world;
  const s = run.checkAlive() ? world.service : null;
  if (!s) return void (await world.stop("SIGKILL"));
  s.proc.kill("SIGTERM");
  const exited = await Promise.race([s.proc.exited.then(() => true), Bun.sleep(SHUTDOWN_MS).then(() => false)]);
  if (!exited) run.fail("shutdown_slow", `no exit within ${SHUTDOWN_MS} ms of SIGTERM`);
  else if (s.proc.exitCode !== 0) run.fail("shutdown_exit", `SIGTERM → ${s.death()}`);
  await world.stop("SIGKILL");
}

/**
 * A feed fault (cdc worlds): done to the source, then its `after` changes. Live: the process is
 * left running, no restart, and queries must answer throughout. `down`: between a SIGTERM and the
 * restart. Where a heal is certain (a slot or publication gone; a slot advanced past changes made
 * while the process was down), sync/status must say so by the time the checks pass.
 */
async function feedFault(run: Run, i: Extract<Interruption, { down: boolean }>): Promise<boolean> {
  const world = run.world;
  run.report.feedFaults.push(i.down ? `${i.kind} (down)` : i.kind);
  if (i.down) await sigterm(run);
  else run.healing = run.checkAlive();
  const re = HEAL_ACCOUNT[i.kind] ?? null;
  run.account = { re: i.down || i.kind !== "advance_slot" ? re : null, mark: run.watch?.mark() ?? 0 };
  const line = await applyFeedFault(world.pg.sql, world.feed, i.kind, !i.down, async () => (await applyWorkloads(run, i.after)).join("; ")).catch((e) => (run.fail("fault_error", `${i.kind}: ${String(e)}`), "error"));
  run.log(`    ${line}`);
  return i.down || !run.healing;
}

/** Interrupts the process as `i` says; answers whether a restart follows (false: a feed fault healed live). */
export async function interrupt(run: Run, i: Interruption): Promise<boolean> {
  const world = run.world;
  if (isFeedFault(i)) return feedFault(run, i);
  const s = run.checkAlive() ? world.service : null;
  switch (i.kind) {
    case "sigterm": {
      if (s && i.settle) for (const f of await run.underLoad(() => run.settle())) run.fail(f.kind, f.detail);
      await sigterm(run);
      return true;
    }
    case "kill":
      await Bun.sleep(i.delayMs);
      await world.stop("SIGKILL");
      return true;
    case "kill_in_checkpoint":
      s?.proc.kill("SIGTERM");
      await Bun.sleep(i.delayMs);
      await world.stop("SIGKILL");
      return true;
    case "kill_in_startup":
      await world.stop("SIGKILL");
      for (const delay of i.delaysMs) {
        world.spawn();
        world.restarts++;
        await Bun.sleep(delay);
        await world.stop("SIGKILL");
      }
      return true;
  }
}
