import { ConfigError, type Config } from "./config.ts";
import { hostPolicy } from "./drivers/sources/host-guard.ts";
import { VectorStore } from "./drivers/vector-store/index.ts";
import { join } from "node:path";
import type { Database } from "./db/client.ts";
import { createAuthenticator } from "./domains/auth/authenticator.ts";
import { cleanupExpiredAuth } from "./domains/auth/cleanup.ts";
import { registerOrganizationTasks } from "./domains/organizations/tasks.ts";
import { registerSyncTasks } from "./domains/sync/tasks.ts";
import { tableEngine } from "./domains/sync/lifecycle.ts";
import type { TableEngine } from "./domains/vector-tables/engine.ts";
import type { Authenticator } from "./http/auth.ts";
import { createTaskSystem, type Scheduler, type TaskService } from "./scheduler/scheduler.ts";
import { systemClock, type Clock } from "./shared/clock.ts";
import type { Logger } from "./shared/log.ts";
import { createMailer, type Mailer } from "./mail/mailer.ts";
import { secretBox, type SecretBox } from "./shared/secrets.ts";

/** The typed bag of drivers and services handed to routes, procedures and tasks. */
export type Services = {
  config: Config;
  logger: Logger;
  clock: Clock;
  database: Database;
  scheduler: Scheduler;
  /** The durable task queue: register handlers and periodic jobs, enqueue work. */
  tasks: TaskService;
  authenticator: Authenticator;
  mailer: Mailer;
  /** The managed vector store: every vector table's collection (managed mode). */
  vectors: VectorStore;
  /** Encrypts secrets at rest under the master key (CONTRACT 6). */
  secrets: SecretBox;
  /** The sync engine as the vector-tables API calls it (vector-tables does not import sync). */
  engine: TableEngine;
};

/** Opens the managed vector store on the service database; index files live in `<data-dir>/indexes`. */
export function openVectorStore(config: Config, database: Database, logger: Logger): Promise<VectorStore> {
  return VectorStore.open({
    client: database.client,
    indexDir: join(config.dataDir, "indexes"),
    log: (event, fields) => logger.info(fields, `vector store: ${event}`),
  });
}

export type Readiness = { ready: boolean; checks: Record<string, boolean> };

export function buildServices(config: Config, database: Database, vectors: VectorStore, logger: Logger, clock: Clock = systemClock): Services {
  try {
    hostPolicy(config); // a bad VECSYNC_DENY_HOSTS / VECSYNC_ALLOW_HOSTS entry stops start-up, not a request
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const { scheduler, tasks } = createTaskSystem(database.db, clock, logger, { workers: config.workers });
  const authenticator = createAuthenticator(database.db, config.jwtSecret, clock);
  const mailer = createMailer({ smtpUrl: config.smtpUrl, outbox: config.mailOutbox, logger });
  const services: Services = { config, logger, clock, database, scheduler, tasks, authenticator, mailer, vectors, secrets: secretBox(config.masterKey), engine: tableEngine(() => services) };
  registerOrganizationTasks(services);
  registerSyncTasks(services);
  // Periodic clean-ups, run while the scheduler runs.
  tasks.every("auth-cleanup", "*/10 * * * *", async () => void (await cleanupExpiredAuth(services)));
  return services;
}

export async function readiness(services: Services): Promise<Readiness> {
  const database = await services.database.client
    .execute("SELECT 1")
    .then(() => true)
    .catch(() => false);
  const checks = { database, scheduler: services.scheduler.running, vector_store: services.vectors.ready() };
  return { ready: Object.values(checks).every(Boolean), checks };
}
