// Registers the sync engine with the task system: the backfill/rebackfill handlers and the
// periodic ticks (batch passes on VECSYNC_SYNC_INTERVAL, CDC consumers kept running, building
// generations no task owns dropped).
import { type } from "arktype";
import type { Services } from "../../services.ts";
import { runFillTask } from "./backfill.ts";
import { dropFailedGenerations, dropOrphanGenerations, fillFailed } from "./generations.ts";
import { consumersTick, intervalPattern, syncTick } from "./lifecycle.ts";

/** One run's limit; a large table resumes from its checkpoint in the next run. */
const FILL_TIMEOUT_MS = 6 * 60 * 60_000;

const fillPayload = type({ vector_table_id: "string", config_version: "number.integer" });

export function registerSyncTasks(services: Services): void {
  for (const kind of ["backfill", "rebackfill"] as const) {
    services.tasks.register({
      taskType: kind,
      timeoutMs: FILL_TIMEOUT_MS,
      payload: fillPayload,
      handler: (ctx) => runFillTask(services, ctx, kind),
      onFailed: (tx, failure) => fillFailed(services, tx, failure),
      afterFailed: (failure) => dropFailedGenerations(services, failure),
    });
  }
  services.tasks.every("sync-pass", intervalPattern(services.config.syncIntervalSec), () => syncTick(services));
  services.tasks.every("sync-consumers", "* * * * * *", () => consumersTick(services));
  services.tasks.every("orphan-generations", "30 * * * * *", () => dropOrphanGenerations(services));
}
