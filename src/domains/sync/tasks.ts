// Registers the sync engine with the task system: the backfill/rebackfill handlers and the
// periodic ticks (batch passes on VECSYNC_SYNC_INTERVAL, CDC consumers kept running, building
// generations no task owns dropped).
import type { Services } from "../../services.ts";
import { FILL_TASK_TYPES, FillPayload } from "../tasks/kinds.ts";
import { runFillTask } from "./backfill.ts";
import { dropFailedGenerations, dropOrphanGenerations, fillFailed } from "./generations.ts";
import { consumersTick, intervalPattern, syncTick } from "./lifecycle.ts";

/** One run's limit; a large table resumes from its checkpoint in the next run. */
const FILL_TIMEOUT_MS = 6 * 60 * 60_000;

export function registerSyncTasks(services: Services): void {
  for (const kind of FILL_TASK_TYPES) {
    services.tasks.register({
      taskType: kind,
      timeoutMs: FILL_TIMEOUT_MS,
      payload: FillPayload,
      handler: (ctx) => runFillTask(services, ctx, kind),
      onFailed: (tx, failure) => fillFailed(services, tx, failure),
      afterFailed: (failure) => dropFailedGenerations(services, failure),
    });
  }
  services.tasks.every("sync-pass", intervalPattern(services.config.syncIntervalSec), () => syncTick(services));
  services.tasks.every("sync-consumers", "* * * * * *", () => consumersTick(services));
  services.tasks.every("orphan-generations", "30 * * * * *", () => dropOrphanGenerations(services));
}
