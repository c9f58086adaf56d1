// The damage run: one world, backfilled and checkpointed; then for each damage of damage.ts the
// process is stopped, the damage done, and the restart checked like any other (listening and
// /readyz 200 within 30 s, every row findable, nothing deleted served). Last, a kill -9 right
// after writes and the WAL cut mid-frame. Between them, docs/running.md#one-process: a second serve on the same
// data dir or port is refused (exclusive.ts). A damage the service cannot start from is a failure;
// the run then removes the index files (the service must rebuild from libSQL) and goes on.
import { rmSync } from "node:fs";
import { must } from "../e2e/helpers.ts";
import { waitCaughtUp } from "./checker.ts";
import { checkExclusive } from "./exclusive.ts";
import { DAMAGES, indexDirOf, keepStale, truncateWalTail } from "./damage.ts";
import { interrupt, catchUpMsOf, type Report } from "./runner.ts";
import { Run } from "./run.ts";
import { applyWorkload } from "./workload.ts";
import { FaultWorld } from "./world.ts";

/** `damages`: the names of the damages to do (default every one of DAMAGES). */
export type DamageOptions = { rows: number; catchUpMs?: number; log?: (line: string) => void; damages?: string[] };

/** Writes, then waits until they are in the index (so the next checkpoint covers them). */
async function writeAndSettle(run: Run, version: number): Promise<void> {
  const { world } = run;
  const target = { api: world.api, tableId: world.tableId };
  await applyWorkload(world.pg.sql, target, { kind: "update_text", slice: { mod: 7, rem: version % 7 }, version }, world.rows);
  await applyWorkload(world.pg.sql, target, { kind: "insert", count: 20 }, world.rows);
  const waited = await waitCaughtUp(world.api, world.tableId, Date.now(), run.catchUpMs);
  // A process that died meanwhile is reported as such (checkAlive), not as an unreadable table.
  if (waited.some((f) => f.kind === "table_unreadable")) await Promise.race([world.service?.proc.exited, Bun.sleep(1_000)]);
  if (run.checkAlive()) for (const f of waited) run.fail(f.kind, f.detail);
}

/** After a damage the service could not live with: no index files, so it must rebuild from libSQL. */
async function recover(run: Run): Promise<boolean> {
  await run.world.stop("SIGKILL");
  rmSync(indexDirOf(run.world.dataDir), { recursive: true, force: true });
  return run.restartAndCheck(`recovery from "${run.phase}" without index files`);
}

export async function runDamage(opts: DamageOptions): Promise<Report> {
  await using world = await FaultWorld.open(opts.rows);
  const run = new Run(world, 0, opts.catchUpMs ?? catchUpMsOf(opts.rows), opts.log ?? (() => {}));
  try {
    const first = await world.start();
    if (!first.ok) return (run.fail("failed_start", first.problem), run.report);
    await world.provision();
    must(await world.api.call("POST", `/v1/vector-tables/${world.tableId}/backfill`), 200);
    for (const f of await waitCaughtUp(world.api, world.tableId, Date.now(), run.catchUpMs)) run.fail(f.kind, f.detail);
    await interrupt(run, { kind: "sigterm" });
    keepStale(world.dataDir);
    if (!(await run.restartAndCheck("after the first checkpoint"))) return run.report;
    // Writes after the stale copy, so that today's checkpoint covers a later sequence than it.
    await writeAndSettle(run, 1);
    for (const damage of DAMAGES.filter((d) => !opts.damages || opts.damages.includes(d.name))) {
      // Checked under the previous damage's name: a process that served a while, then died of
      // what it loaded ("Linking to missing level"), is that damage's failure.
      if (!run.checkAlive() && !(await recover(run))) return run.report;
      await interrupt(run, { kind: "sigterm" });
      run.cycle++;
      run.phase = damage.name;
      damage.apply(world.dataDir);
      run.log(`  damage: ${damage.name}`);
      if (!(await run.restartAndCheck(`damage "${damage.name}"`))) {
        if (!(await recover(run))) return run.report;
        continue;
      }
      // Writes go through the loaded index's insert path, where a damaged graph can still abort
      // (the others were rebuilt from libSQL: nothing damaged is left to write through).
      if (damage.passesChecks) await writeAndSettle(run, run.cycle + 1);
    }
    if (!run.checkAlive() && !(await recover(run))) return run.report;
    await checkExclusive(run);
    run.cycle++;
    run.phase = "WAL tail cut";
    const target = { api: world.api, tableId: world.tableId };
    await applyWorkload(world.pg.sql, target, { kind: "update_text", slice: { mod: 3, rem: 1 }, version: 99 }, world.rows);
    // A batch pass picks the change up within ~1 s and writes it: kill while it does.
    await Bun.sleep(1_200);
    await interrupt(run, { kind: "kill", delayMs: 0 });
    const cut = truncateWalTail(world.dataDir);
    if (!cut) run.fail("wal_not_cut", "the WAL held no current frame after kill -9: nothing was cut");
    else run.log(`  WAL of ${cut.bytes} bytes, ${cut.frames} current frames, cut at ${cut.cutAt}`);
    await run.restartAndCheck("WAL tail cut");
    run.report.cycles = run.cycle;
    return run.report;
  } finally {
    await run.finish();
  }
}
