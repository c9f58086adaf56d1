// A fresh migrated database file and runners over it, for the scheduler's own tests.
import { eq } from "drizzle-orm";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { TaskCatalog } from "../../src/scheduler/catalog.ts";
import { TaskRunner, type RunnerOptions } from "../../src/scheduler/runner.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { tempDir, type TempDir } from "../harness.ts";

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

export function runnerFor(database: Database, catalog: TaskCatalog, opts: Partial<RunnerOptions> = {}): TaskRunner & AsyncDisposable {
  const runner = new TaskRunner(database.db, catalog, systemClock, createLogger("silent"), { ...FAST, ...opts });
  return Object.assign(runner, { [Symbol.asyncDispose]: () => runner.stop() });
}

export async function taskRow(database: Database, id: string) {
  const [row] = await database.db.select().from(tasks).where(eq(tasks.id, id));
  return row!;
}
