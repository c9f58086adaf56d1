// `vecsync serve` and `vecsync migrate`: configuration, the data-dir lock, signals, and the
// composition in src/runtime.ts (database + migrations → vector store → services → scheduler → HTTP).
import { loadConfig, parseFlags, resolveConfig, SERVE_FLAGS, type Config } from "./config.ts";
import { lockDataDir, makePrivate, PRIVATE_UMASK } from "./data-dir.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { refuseNewMasterKey } from "./key-check.ts";
import { startWhenSpace, type RunningService } from "./runtime.ts";
import { isStorageFull, rootMessage } from "./shared/errors.ts";
import { createLogger } from "./shared/log.ts";
import { VERSION } from "./version.ts";

const SHUTDOWN_DEADLINE_MS = 10_000;

async function configFrom(args: string[]) {
  // Before anything is written: every file the service creates is 0600, every folder 0700.
  process.umask(PRIVATE_UMASK);
  const flags = parseFlags(args, SERVE_FLAGS);
  // Before resolveConfig generates a missing master.key: not over credentials sealed with another (key-check.ts).
  const partial = loadConfig(flags, process.env);
  await refuseNewMasterKey({ dataDir: partial.dataDir, databaseUrl: partial.databaseUrl, masterKeyGiven: partial.masterKey !== null });
  const config = resolveConfig(flags, process.env);
  makePrivate(config.dataDir);
  return { config, logger: createLogger(config.logLevel) };
}

export async function serve(args: string[]): Promise<void> {
  const { config, logger } = await configFrom(args);
  lockDataDir(config.dataDir); // held until the process ends (docs/running.md#one-process)
  // Handlers go in before the listening line: a supervisor may signal as soon as it reads it.
  let running: RunningService | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    await running?.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // A full disk never takes the process down (issue 12), not even through a background write no
  // one awaited; anything else still ends it, as Bun's default would, but logged first.
  const stray = (kind: string) => (err: unknown) => {
    if (isStorageFull(err)) return logger.warn({ error: rootMessage(err) }, `${kind} while the disk is full; carrying on`);
    logger.fatal({ err }, kind);
    process.exit(1);
  };
  process.on("unhandledRejection", stray("unhandled rejection"));
  process.on("uncaughtException", stray("uncaught exception"));
  running = await startWhenSpace(config, logger);
  console.log(`vecsync listening on ${running.url}`);
  // The contract's first line stays first (CONTRACT 1); this one says what is running, on stdout
  // where a person reads it under `npm start` (the JSON log goes to stderr).
  console.log(`vecsync ${VERSION} · data dir ${config.dataDir} · API reference ${running.url}/docs · Ctrl-C stops it`);
  for (const warning of exposureWarnings(config)) logger.warn({ host: config.host }, warning);
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

/** What an operator must set before the port faces other machines (docs/security.md#facing-the-internet). */
export function exposureWarnings(config: Pick<Config, "host" | "metricsToken">): string[] {
  if (LOOPBACK.test(config.host)) return [];
  return config.metricsToken === null
    ? ["GET /metrics is open to every client that reaches this address and lists every organization's tables and row counts: set VECSYNC_METRICS_TOKEN (docs/security.md#facing-the-internet)"]
    : [];
}

export async function migrateOnly(args: string[]): Promise<void> {
  const { config, logger } = await configFrom(args);
  lockDataDir(config.dataDir); // never under a running server's feet
  const database = await openDatabase(config.databaseUrl);
  const { applied } = await migrate(database.client);
  if (applied.length) logger.info({ applied }, "migrations applied");
  database.close();
}
