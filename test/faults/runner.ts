// One seeded fault run: a world, its schedule (schedule.ts), and after every restart the checks
// of checker.ts (through run.ts). Cycle 0 kills the first backfill at a random point; each further
// cycle applies its workloads, interrupts the process, restarts it on the same data dir and
// checks. A process that cannot start ends the run (every later cycle would fail the same way).
import { must } from "../e2e/helpers.ts";
import { waitCaughtUp } from "./checker.ts";
import { Run, type Report } from "./run.ts";
import { describeCycle, schedule, type Interruption } from "./schedule.ts";
import { applyWorkload } from "./workload.ts";
import { FaultWorld } from "./world.ts";

export type { Failure, Report } from "./run.ts";
export type RunOptions = { seed: number; cycles: number; rows: number; catchUpMs?: number; log?: (line: string) => void };

/** docs/running.md#shutdown: SIGTERM → exit 0 within 10 s. */
const SHUTDOWN_MS = 10_000;

/** Kill delays span about the time a backfill of the table takes on this machine (~0.5 ms a row). */
export const busyMsOf = (rows: number) => Math.min(8_000, Math.max(1_000, Math.round(rows * 0.6)));
export const catchUpMsOf = (rows: number) => 60_000 + rows * 3;

export async function runSeed(opts: RunOptions): Promise<Report> {
  const plan = schedule(opts.seed, opts.cycles, opts.rows, busyMsOf(opts.rows));
  await using world = await FaultWorld.open(opts.rows);
  const run = new Run(world, opts.seed, opts.catchUpMs ?? catchUpMsOf(opts.rows), opts.log ?? (() => {}));
  try {
    const first = await world.start();
    if (!first.ok) return (run.fail("failed_start", first.problem), run.report);
    await world.provision();
    must(await world.api.call("POST", `/v1/vector-tables/${world.tableId}/backfill`), 200);
    run.phase = "cycle 0: first backfill";
    const at = Math.floor(plan.firstKillAt * opts.rows);
    const seen = await untilSynced(run, at);
    run.log(`seed ${opts.seed}: ${opts.rows} rows, first backfill killed at ${seen} synced rows (aimed at ${at})`);
    await interrupt(run, { kind: "kill", delayMs: 0 });
    for (;;) {
      if (!(await run.restartAndCheck(`cycle ${run.cycle}`))) break;
      run.report.cycles = run.cycle;
      const next = plan.cycles[run.cycle];
      if (!next) break;
      run.cycle++;
      run.log(`  cycle ${run.cycle}: ${describeCycle(next)}`);
      run.phase = `cycle ${run.cycle}: workloads`;
      for (const w of next.workloads) {
        const line = await applyWorkload(world.pg.sql, { api: world.api, tableId: world.tableId }, w, opts.rows).catch((e) => (run.fail("workload_error", `${w.kind}: ${String(e)}`), "error"));
        run.log(`    ${line}`);
      }
      run.phase = `cycle ${run.cycle}: ${next.interruption.kind}`;
      await interrupt(run, next.interruption);
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

export async function interrupt(run: Run, i: Interruption): Promise<void> {
  const world = run.world;
  const s = run.checkAlive() ? world.service : null;
  switch (i.kind) {
    case "sigterm": {
      if (!s) return void (await world.stop("SIGKILL"));
      if (i.settle) for (const f of await run.underLoad(() => waitCaughtUp(world.api, world.tableId, Date.now(), run.catchUpMs))) run.fail(f.kind, f.detail);
      s.proc.kill("SIGTERM");
      const exited = await Promise.race([s.proc.exited.then(() => true), Bun.sleep(SHUTDOWN_MS).then(() => false)]);
      if (!exited) run.fail("shutdown_slow", `no exit within ${SHUTDOWN_MS} ms of SIGTERM`);
      else if (s.proc.exitCode !== 0) run.fail("shutdown_exit", `SIGTERM → ${s.death()}`);
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
