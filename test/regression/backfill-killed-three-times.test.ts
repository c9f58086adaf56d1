// Regression (issue 12, item 5): a backfill whose process was killed (-9) three times, each time
// after its run had saved progress, ended `failed` ("its worker died", attempts 4/3) while its
// table stayed `backfilling` forever. docs/api.md#tasks now counts only runs that made no progress, so
// the fourth process finishes the backfill. Real processes, killed once their run's checkpoint
// is visible through the API (an event, not a delay).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { eventually, startProcess, type RunningProcess } from "../harness.ts";
import { createWorld, expectStoreMatchesSource, fillForChildren } from "../domains/sync/world.ts";

// Starts processes and databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const ROWS = 4000;

describe("happy", () => {
  test("killed -9 three times after saving progress: the fourth process finishes the backfill", async () => {
    const w = await createWorld({ rows: ROWS, fakeLatencyMs: 60 });
    const { config } = w.app;
    let child: RunningProcess | null = null;
    try {
      const { table, task, env } = await fillForChildren(w);
      const get = (path: string) => fetch(`${child!.url}${path}`, { headers: w.org.owner.key }).then((r) => r.json() as Promise<any>);

      let saved = 0;
      for (let kill = 1; kill <= 3; kill++) {
        child = await startProcess({ dataDir: config.dataDir, env });
        const before = saved;
        saved = await eventually(async () => {
          const t = await get(`/v1/tasks/${task.id}`);
          return t.status === "running" && t.progress.rows_processed > before && t.progress.rows_processed;
        }, 30_000, 5);
        child.proc.kill("SIGKILL");
        await child.proc.exited;
      }
      expect(saved).toBeLessThan(ROWS); // killed mid-way each time

      child = await startProcess({ dataDir: config.dataDir, env });
      const finished = await eventually(async () => {
        const t = await get(`/v1/tasks/${task.id}`);
        return t.status !== "running" && t.status !== "pending" && t;
      }, 60_000, 50);
      expect(finished).toMatchObject({ status: "completed", attempts: 4, progress: { rows_processed: ROWS } });
      expect(await get(`/v1/vector-tables/${table.id}`)).toMatchObject({ sync_status: "synced", total_rows: ROWS, synced_rows: ROWS });
      await child.stop("SIGTERM");

      await expectStoreMatchesSource(config, w.sql, table);
    } finally {
      await child?.[Symbol.asyncDispose]();
      await w.pg[Symbol.asyncDispose]();
      await w.fake.stop();
      rmSync(config.dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
