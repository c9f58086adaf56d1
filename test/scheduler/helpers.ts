// A fresh migrated database file and runners over it, for the scheduler's own tests.
import { type } from "arktype";
import { eq } from "drizzle-orm";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { TaskCatalog } from "../../src/scheduler/catalog.ts";
import { claimNext, saveProgress } from "../../src/scheduler/queue.ts";
import { TaskRunner, type RunnerOptions } from "../../src/scheduler/runner.ts";
import type { TaskProgress } from "../../src/scheduler/types.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { systemClock, type Clock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { BACKFILL, ORG_DELETION, REBACKFILL } from "../../src/domains/tasks/kinds.ts";
import { tempDir, type TempDir } from "../harness.ts";

/**
 * Task kinds for the scheduler's own tests: the service's names and defaults (backfill 3/3,
 * org_deletion 7/5), with a payload of their own.
 */
export const Payload = type({ n: "number" });
export const FILL = { ...BACKFILL, payload: Payload };
export const REFILL = { ...REBACKFILL, payload: Payload };
export const DELETION = { ...ORG_DELETION, payload: Payload };

/** Small numbers so retries and lease expiry happen within a test. */
export const FAST: Partial<RunnerOptions> = { pollMs: 10, leaseMs: 2_000, backoff: { baseMs: 5, capMs: 20 }, graceMs: 500 };

export type QueueWorld = { dir: TempDir; url: string; database: Database } & AsyncDisposable;

export async function queueWorld(): Promise<QueueWorld> {
  const dir = tempDir("vecsync-sched-");
  const url = `file:${join(dir.path, "vecsync.db")}`;
  const database = await openDatabase(url);
  await migrate(database.client);
  return {
    dir,
    url,
    database,
    async [Symbol.asyncDispose]() {
      database.close();
      dir[Symbol.dispose]();
    },
  };
}

export function runnerFor(database: Database, catalog: TaskCatalog, opts: Partial<RunnerOptions> = {}, clock: Clock = systemClock): TaskRunner & AsyncDisposable {
  const runner = new TaskRunner(database.db, catalog, clock, createLogger("silent"), { ...FAST, ...opts });
  return Object.assign(runner, { [Symbol.asyncDispose]: () => runner.stop() });
}

export async function taskRow(database: Database, id: string) {
  const [row] = await database.db.select().from(tasks).where(eq(tasks.id, id));
  return row!;
}

/**
 * One run of a process that then died (kill -9): it claims the task, saves `progress` when given
 * (as a run that got somewhere does), and its lease runs out. Exactly the rows such a run leaves.
 */
export async function deadRun(database: Database, taskId: string, progress: TaskProgress | null): Promise<void> {
  const workerId = `dead-${crypto.randomUUID()}`;
  const claimed = await claimNext(database.db, { workerId, types: ["backfill", "rebackfill", "org_deletion"], now: new Date(), leaseMs: 60_000 });
  if (claimed?.id !== taskId) throw new Error(`deadRun claimed ${claimed?.id ?? "nothing"}, not ${taskId}`);
  if (progress) await saveProgress(database.db, taskId, workerId, progress, new Date(), 60_000);
  await database.db.update(tasks).set({ lockedUntil: new Date(Date.now() - 1).toISOString() }).where(eq(tasks.id, taskId));
}
