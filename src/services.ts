// The bag of drivers and services handed to routes, procedures and tasks, and the constructors of
// its drivers. It imports no domain: src/wiring.ts builds the bag and registers what runs.
import type { Config } from "./config.ts";
import { VectorStore } from "./drivers/vector-store/index.ts";
import { join } from "node:path";
import type { Database } from "./db/client.ts";
import type { Executor } from "./db/executor.ts";
import type { Scheduler, TaskService } from "./scheduler/scheduler.ts";
import type { Clock } from "./shared/clock.ts";
import type { TableEngine } from "./domains/vector-tables/engine.ts";
import type { PlatformStores } from "./drivers/platform/types.ts";
import type { Logger } from "./shared/log.ts";
import type { Authenticator } from "./shared/actor.ts";
import type { Mailer } from "./mail/mailer.ts";
import type { SecretBox } from "./shared/secrets.ts";
import type { Metrics } from "./shared/metrics.ts";
import type { Foreground } from "./shared/foreground.ts";

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
  /** Platform-mode stores, one per connection (pgvector in the source…); reach a table's storage through vector-tables/storage.ts. */
  platform: PlatformStores;
  /** Encrypts secrets at rest under the master key (docs/running.md#secrets). */
  secrets: SecretBox;
  /** What depends on what: the rules src/wiring.ts lists, read where a deletion is decided. */
  dependents: Dependents;
  /** The sync engine as the vector-tables API calls it (vector-tables does not import sync). */
  engine: TableEngine;
  /** This service's Prometheus registry and what records into it (docs/operability.md#metrics). */
  metrics: Metrics;
  /** Requests and sync under way, which the vector store's background work gives way to (shared/foreground.ts); the store's own. */
  foreground: Foreground;
};

/**
 * A resource that refuses deletion while others use it (409 in_use: docs/api.md#environments, docs/api.md#connections). The rule
 * closes over the services it needs, so the domain that owns the resource never imports the
 * domains that use it.
 */
export type UsageRule = {
  /** Plural resource name for the error message, e.g. "vector tables". */
  resource: string;
  /** How many of them use the resource `id` of the organization (0 = none). */
  count(orgId: string, id: string): Promise<number>;
};

/** What a domain contributes to deleting an organization (the org_deletion task, docs/api.md#organizations). */
export type OrganizationCleaner = {
  name: string;
  /** Removes resources outside our database (must tolerate their being gone already). */
  external?(orgId: string): Promise<void>;
  /** Deletes the domain's rows for the organization, inside the records transaction. */
  records?(tx: Executor, orgId: string): Promise<void>;
};

export type Dependents = {
  /** What uses an environment. */
  environment: readonly UsageRule[];
  /** What uses a connection. */
  connection: readonly UsageRule[];
  /** What uses an embedding provider. */
  embeddingProvider: readonly UsageRule[];
  /** In order: every cleaner's external step, then every cleaner's records in one transaction. */
  organization: readonly OrganizationCleaner[];
};

/** The resources still using `id`, e.g. ["vector tables"], in the rules' order; empty when free. */
export async function usersOf(rules: readonly UsageRule[], orgId: string, id: string): Promise<string[]> {
  const counts = await Promise.all(rules.map(async (rule) => [rule.resource, await rule.count(orgId, id)] as const));
  return counts.filter(([, n]) => n > 0).map(([resource]) => resource);
}

/** Opens the managed vector store on the service database; index files live in `<data-dir>/indexes`. */
export function openVectorStore(config: Config, database: Database, logger: Logger): Promise<VectorStore> {
  return VectorStore.open({
    client: database.client,
    indexDir: join(config.dataDir, "indexes"),
    floatMirrorBytes: config.floatMirrorMb === null ? undefined : config.floatMirrorMb * 2 ** 20,
    log: (event, fields) => logger.info(fields, `vector store: ${event}`),
  });
}

export type Readiness = { ready: boolean; checks: Record<string, boolean> };

export async function readiness(services: Services): Promise<Readiness> {
  const database = await services.database.client
    .execute("SELECT 1")
    .then(() => true)
    .catch(() => false);
  const checks = { database, scheduler: services.scheduler.running, vector_store: services.vectors.ready() };
  return { ready: Object.values(checks).every(Boolean), checks };
}
