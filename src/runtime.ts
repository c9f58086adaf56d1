import type { Config } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { listen } from "./server.ts";
import { buildServices, openVectorStore, type Services } from "./services.ts";
import type { Logger } from "./shared/log.ts";

export type RunningService = { services: Services; url: string; stop(): Promise<void> };

/**
 * The whole service, composed in order — database + migrations → vector store → services →
 * scheduler → HTTP — and stopped in reverse. `vecsync serve` and `vecsync demo` both run this.
 */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const database = await openDatabase(config.databaseUrl);
  const { applied } = await migrate(database.client);
  if (applied.length) logger.info({ applied }, "migrations applied");
  const vectors = await openVectorStore(config, database, logger);
  const services = buildServices(config, database, vectors, logger);
  // Bind before the scheduler starts: a refused port (CONTRACT 9) must not have run any task.
  let server: ReturnType<typeof listen>;
  try {
    server = listen(services, config.host, config.port);
  } catch (err) {
    await vectors.close();
    database.close();
    throw err;
  }
  services.scheduler.start();
  return {
    services,
    url: server.url,
    async stop() {
      await server.stop();
      await services.scheduler.stop(); // running tasks checkpoint and hand their work back
      await vectors.close(); // checkpoints the indexes
      database.close();
    },
  };
}
