// The wiring of the service, in one place: the services bag is built here, and everything that
// runs or decides because of another domain is listed here — each task kind bound to its handler,
// each periodic job, which deletions are refused while something uses the resource, and what
// deleting an organization removes. Nothing registers itself when a module is imported, so a test
// (or a process) that imports fewer modules cannot lose a rule: it builds the same list.
import { ConfigError, type Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import type { VectorStore } from "./drivers/vector-store/index.ts";
import { createMailer } from "./mail/mailer.ts";
import { createTaskSystem } from "./scheduler/scheduler.ts";
import type { Dependents, Services } from "./services.ts";
import { systemClock, type Clock } from "./shared/clock.ts";
import { hostPolicy } from "./shared/host-guard.ts";
import type { Logger } from "./shared/log.ts";
import { createMetrics } from "./shared/metrics.ts";
import { secretBox } from "./shared/secrets.ts";
import { createAuthenticator } from "./domains/auth/authenticator.ts";
import { cleanupExpiredAuth } from "./domains/auth/cleanup.ts";
import { openPgvector, openWarehousePlatform, platformStores } from "./domains/connections/platform.ts";
import { countEnvironmentConnections, deleteOrganizationConnections } from "./domains/connections/repo.ts";
import { countProvidersInEnvironment, deleteOrganizationProviders } from "./domains/embedding-providers/repo.ts";
import { deleteOrganizationData } from "./domains/organizations/deletion.ts";
import { runFillTask } from "./domains/sync/backfill.ts";
import { forgetOrganizationEmptyRows } from "./domains/sync/empty-rows.ts";
import { forgetOrganizationPasses } from "./domains/sync/repo.ts";
import { dropFailedGenerations, dropOrphanGenerations, fillFailed } from "./domains/sync/generations.ts";
import { consumersTick, intervalPattern, syncTick, tableEngine } from "./domains/sync/lifecycle.ts";
import { BACKFILL, ORG_DELETION, REBACKFILL } from "./domains/tasks/kinds.ts";
import { countTasksByTypeAndStatus } from "./domains/tasks/repo.ts";
import { countVectorTablesBy, deleteOrganizationVectorTables, organizationVectorTables } from "./domains/vector-tables/repo.ts";
import { tableReadings } from "./domains/vector-tables/metrics.ts";
import { dropStorageOf } from "./domains/vector-tables/service.ts";
import { vectorTables } from "./domains/vector-tables/tables.ts";

/** The whole bag, wired: what `vecsync serve` runs and what tests build. */
export function buildServices(config: Config, database: Database, vectors: VectorStore, logger: Logger, clock: Clock = systemClock): Services {
  try {
    hostPolicy(config); // a bad VECSYNC_DENY_HOSTS / VECSYNC_ALLOW_HOSTS entry stops start-up, not a request
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const { scheduler, tasks } = createTaskSystem(database.db, clock, logger, { workers: config.workers });
  const authenticator = createAuthenticator(database.db, config.jwtSecret, clock);
  const mailer = createMailer({ smtpUrl: config.smtpUrl, outbox: config.mailOutbox, logger });
  const secrets = secretBox(config.masterKey);
  // Platform mode per connection provider: the store each one keeps its vectors in (a provider
  // missing here refuses platform storage with a clear error).
  const platform = platformStores({ config, secrets }, { db_relational: openPgvector, db_warehouse: openWarehousePlatform });
  const none: Dependents = { environment: [], connection: [], embeddingProvider: [], organization: [] };
  // One registry per service, never the process-wide default: a test process runs several services.
  const metrics = createMetrics({ vectorTables: () => tableReadings({ database, clock }), tasks: () => countTasksByTypeAndStatus(database.db) });
  const services: Services = { config, logger, clock, database, scheduler, tasks, authenticator, mailer, vectors, platform, secrets, dependents: none, engine: tableEngine(() => services), metrics, foreground: vectors.foreground };
  // The rules close over the finished bag, so they are filled in once it exists.
  services.dependents = dependents(services);
  registerTasks(services);
  registerPeriodicJobs(services);
  return services;
}

/** One fill run's limit; a large table resumes from its checkpoint in the next run. */
const FILL_TIMEOUT_MS = 6 * 60 * 60_000;
/** Deleting an organization's external resources can be slow (many collections); a run may take this long. */
const ORG_DELETION_TIMEOUT_MS = 10 * 60_000;

/** Every task kind (domains/tasks/kinds.ts) bound to its handler; workers claim only these. */
export function registerTasks(services: Services): void {
  for (const kind of [BACKFILL, REBACKFILL]) {
    services.tasks.register(kind, {
      timeoutMs: FILL_TIMEOUT_MS,
      // Hours long: one per organization while other organizations' tasks wait (fair share, scheduler/queue.ts).
      long: true,
      handler: (ctx) => runFillTask(services, ctx, kind.taskType),
      // Failed for good: the table turns `error` (a paused one stays paused); then its building generations go.
      onFailed: (tx, failure) => fillFailed(services, tx, failure),
      afterFailed: (failure) => dropFailedGenerations(services, failure),
    });
  }
  services.tasks.register(ORG_DELETION, {
    timeoutMs: ORG_DELETION_TIMEOUT_MS,
    handler: ({ task, payload }) => deleteOrganizationData(services, payload.organization_id, { runningTaskId: task.id }),
  });
}

/** The periodic jobs (croner patterns, seconds first when six fields), run while the scheduler runs. */
export function registerPeriodicJobs(services: Services): void {
  // A batch pass (for cdc tables, a reconciling one) per eligible table every VECSYNC_SYNC_INTERVAL.
  services.tasks.every("sync-pass", intervalPattern(services.config.syncIntervalSec), () => syncTick(services));
  // CDC consumers started for the tables that want one, stopped for those paused or gone.
  services.tasks.every("sync-consumers", "* * * * * *", () => consumersTick(services));
  // The sweep of building generations no task owns (their task died before it could drop them).
  services.tasks.every("orphan-generations", "30 * * * * *", () => dropOrphanGenerations(services));
  // Expired OTP codes and refresh tokens, rate events older than any window, dead sign-in sessions.
  services.tasks.every("auth-cleanup", "*/10 * * * *", async () => void (await cleanupExpiredAuth(services)));
}

/**
 * What depends on what. A deletion is refused (409 in_use) while a rule of the resource counts
 * users, the error naming them in this order. An organization's deletion runs every cleaner's
 * external step first — a failure there leaves the records for the retry — then every cleaner's
 * records in one transaction, in this order, and then (organizations/deletion.ts) the
 * organization's invitations, API keys, environments, members, other tasks and its row. No table
 * declares a foreign key (see the migrations), so the order inside that transaction is free; it
 * is the order the module-load registrations used to give.
 */
export function dependents(services: Services): Dependents {
  const db = services.database.db;
  const vectorTablesBy = (column: Parameters<typeof countVectorTablesBy>[2]) => ({
    resource: "vector tables",
    count: (orgId: string, id: string) => countVectorTablesBy(db, orgId, column, id),
  });
  return {
    environment: [
      { resource: "embedding providers", count: (orgId, id) => countProvidersInEnvironment(db, orgId, id) },
      { resource: "connections", count: (orgId, id) => countEnvironmentConnections(db, orgId, id) },
      vectorTablesBy(vectorTables.environmentId),
    ],
    connection: [vectorTablesBy(vectorTables.connectionId)],
    embeddingProvider: [vectorTablesBy(vectorTables.embeddingProviderId)],
    organization: [
      { name: "embedding-providers", records: deleteOrganizationProviders },
      { name: "connections", records: deleteOrganizationConnections },
      {
        name: "vector-tables",
        // Outside our database: each table's consumer stopped and its slot and publication freed
        // (best effort), then its storage dropped: its collection, or its platform table (best
        // effort too: a customer database that is gone must not keep the organization alive).
        // A table whose collection could not be dropped is kept, and syncs again (a resume).
        async external(orgId) {
          for (const row of await organizationVectorTables(db, orgId)) {
            await services.engine.stop(row);
            if (row.mode === "managed") {
              await dropStorageOf(services, row).catch((err) => {
                services.engine.resumed(row);
                throw err;
              });
            } else await dropStorageOf(services, row).catch((err) => services.logger.warn({ err, vector_table_id: row.id }, "organization deletion: could not drop a platform table"));
          }
        },
        // The sync engine's records of the tables (rows known to render empty, sync history) go with them.
        async records(tx, orgId) {
          await forgetOrganizationEmptyRows(tx, orgId);
          await forgetOrganizationPasses(tx, orgId);
          await deleteOrganizationVectorTables(tx, orgId);
        },
      },
    ],
  };
}
