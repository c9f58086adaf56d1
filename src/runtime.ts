import type { Config } from "./config.ts";
import { BALLAST_BYTES, freeBytes, releaseBallastIfFull, restoreBallast } from "./db/ballast.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { listen } from "./server.ts";
import { openVectorStore, type Services } from "./services.ts";
import { buildServices } from "./wiring.ts";
import { flushSyncHistory } from "./domains/sync/lifecycle.ts";
import { isStorageFull, rootMessage } from "./shared/errors.ts";
import type { Logger } from "./shared/log.ts";

export type RunningService = { services: Services; url: string; stop(): Promise<void> };

/**
 * The whole service, composed in order — database + migrations → vector store → services →
 * HTTP → scheduler — and stopped in reverse. `vecsync serve` and `vecsync demo` both run this.
 */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  if (releaseBallastIfFull(config.dataDir)) logger.warn({ data_dir: config.dataDir }, "disk full: ballast released so the database can open");
  const database = await openDatabase(config.databaseUrl);
  const opened: { close(): unknown }[] = [database];
  try {
    const { applied } = await migrate(database.client);
    if (applied.length) logger.info({ applied }, "migrations applied");
    const vectors = await openVectorStore(config, database, logger);
    opened.unshift({ close: () => vectors.close() });
    const services = buildServices(config, database, vectors, logger);
    // Bind before the scheduler starts: a refused port (docs/running.md#one-process) must not have run any task.
    const server = listen(services, config.host, config.port);
    services.scheduler.start();
    restoreBallast(config.dataDir);
    return {
      services,
      url: server.url,
      async stop() {
        await server.stop();
        await services.scheduler.stop(); // running tasks checkpoint and hand their work back
        await flushSyncHistory(services); // the change streams' current minute, while the database is open
        await services.platform.close(); // the platform stores' pools in the customers' databases
        await vectors.close(); // checkpoints the indexes
        database.close();
      },
    };
  } catch (err) {
    for (const resource of opened) await resource.close();
    throw err;
  }
}

// A full disk at start-up is waited out, not reported by exiting: under a supervisor an exit is
// a crash loop, and the start succeeds by itself once space returns. The log says so once a minute.
const START_RETRY_MS = 5_000;
const START_RETRY_LOG_EVERY = 12;

/** SQLITE_FULL or ENOSPC; or an I/O error (SQLite extending its -shm index) while the disk has no room. */
function diskFullAtStart(err: unknown, dataDir: string): boolean {
  if (isStorageFull(err)) return true;
  const code = String((err as { code?: unknown }).code ?? "");
  return (code.startsWith("SQLITE_IOERR") || /disk I\/O error/i.test(rootMessage(err))) && freeBytes(dataDir) < BALLAST_BYTES;
}

/** startService, retried while the data dir's disk is full. */
export async function startWhenSpace(config: Config, logger: Logger): Promise<RunningService> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startService(config, logger);
    } catch (err) {
      if (!diskFullAtStart(err, config.dataDir)) throw err;
      if (attempt % START_RETRY_LOG_EVERY === 0) {
        logger.error({ data_dir: config.dataDir, error: rootMessage(err) }, `cannot start: the data directory's disk is full; retrying every ${START_RETRY_MS / 1000} s`);
      }
      await Bun.sleep(START_RETRY_MS);
    }
  }
}
