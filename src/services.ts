import type { Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import { createAuthenticator } from "./domains/auth/authenticator.ts";
import type { Authenticator } from "./http/auth.ts";
import { Scheduler } from "./scheduler/scheduler.ts";
import { systemClock, type Clock } from "./shared/clock.ts";
import type { Logger } from "./shared/log.ts";
import { createMailer, type Mailer } from "./mail/mailer.ts";

/** The typed bag of drivers and services handed to routes, procedures and tasks. */
export type Services = {
  config: Config;
  logger: Logger;
  clock: Clock;
  database: Database;
  scheduler: Scheduler;
  authenticator: Authenticator;
  mailer: Mailer;
};

export type Readiness = { ready: boolean; checks: Record<string, boolean> };

export function buildServices(config: Config, database: Database, logger: Logger, clock: Clock = systemClock): Services {
  const scheduler = new Scheduler({ tick: async () => {}, pollMs: 250, logger });
  const authenticator = createAuthenticator(database.db, config.jwtSecret, clock);
  const mailer = createMailer({ smtpUrl: config.smtpUrl, outbox: config.mailOutbox, logger });
  return { config, logger, clock, database, scheduler, authenticator, mailer };
}

export async function readiness(services: Services): Promise<Readiness> {
  const database = await services.database.client
    .execute("SELECT 1")
    .then(() => true)
    .catch(() => false);
  const checks = { database, scheduler: services.scheduler.running };
  return { ready: Object.values(checks).every(Boolean), checks };
}
