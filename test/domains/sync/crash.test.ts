// SIGKILL during a backfill: a real child process, killed at a random point after at least one
// page, restarted on the same data dir; the backfill finishes and the collection equals the
// source exactly. Rows embedded twice are counted from the fake provider's inputs.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { rmSync } from "node:fs";
import { eventually, startProcess } from "../../harness.ts";
import { PAGE_SIZE } from "../../../src/domains/sync/pages.ts";
import { createWorld, expectStoreMatchesSource, fillForChildren, tableRow } from "./world.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const ROWS = 3000;

describe("happy", () => {
  test("killed mid-backfill, restarted: finishes, exact vector set, at most one batch embedded twice", async () => {
    const w = await createWorld({ rows: ROWS, fakeLatencyMs: 40 });
    const { config } = w.app;
    let child: Awaited<ReturnType<typeof startProcess>> | null = null;
    try {
      const { table, task, env } = await fillForChildren(w);

      child = await startProcess({ dataDir: config.dataDir, env });
      const killAt = PAGE_SIZE * (1 + Math.floor(Math.random() * 6));
      await eventually(() => w.fake.counters.inputs >= killAt, 30_000, 5);
      child.proc.kill("SIGKILL");
      await child.proc.exited;
      const inputsAtKill = w.fake.counters.inputs;
      expect(inputsAtKill).toBeLessThan(ROWS); // killed mid-way

      child = await startProcess({ dataDir: config.dataDir, env });
      const get = (path: string) => fetch(`${child!.url}${path}`, { headers: w.org.owner.key }).then((r) => r.json() as Promise<any>);
      const finished = await eventually(async () => {
        const t = await get(`/v1/tasks/${task.id}`);
        return t.status === "completed" && t;
      }, 60_000, 50);
      expect(finished.attempts).toBe(2); // the killed run counts (docs/api.md#tasks)
      await child.stop("SIGTERM");

      await expectStoreMatchesSource(config, w.sql, table);
      const twice = w.fake.counters.inputs - ROWS;
      console.log(`crash test: killed after ${inputsAtKill} embedded inputs; rows embedded twice: ${twice} (page size ${PAGE_SIZE})`);
      expect(twice).toBeGreaterThanOrEqual(0);
      expect(twice).toBeLessThanOrEqual(PAGE_SIZE);
    } finally {
      await child?.[Symbol.asyncDispose]();
      await w.pg[Symbol.asyncDispose]();
      await w.fake.stop();
      rmSync(config.dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
