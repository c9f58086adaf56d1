#!/usr/bin/env bun
// The CLI and the binary's entry: reads the command line and runs the composition in
// src/runtime.ts (database + migrations → vector store → services → scheduler → HTTP).
import { ConfigError, parseFlags, resolveConfig, SERVE_FLAGS } from "./config.ts";
import { lockDataDir, makePrivate, PRIVATE_UMASK, StartRefused } from "./data-dir.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { isStorageFull, rootMessage } from "./shared/errors.ts";
import { createLogger } from "./shared/log.ts";
import { startWhenSpace, type RunningService } from "./runtime.ts";
import { selfCheck } from "./selfcheck.ts";
import { VERSION } from "./version.ts";
import { runDemo } from "./demo/index.ts";

const HELP = `vecsync ${VERSION} — keeps vector embeddings of a database table current

usage: vecsync <command> [flags]

commands:
  serve      migrate the database, start the scheduler and serve HTTP (REST /v1, tRPC /trpc)
  migrate    apply database migrations and exit
  version    print the version; --check also opens every embedded engine
  demo       a guided tour on a throwaway service and sample table, printing each step's curl
             (needs a local Postgres; \`bun run demo\` in a checkout falls back to a test server;
             vecsync demo --help for more)
  help       this text

flags (serve, migrate):
  --port N        VECSYNC_PORT, default 8080 (0 picks a free port)
  --host H        VECSYNC_HOST, default 127.0.0.1
  --data-dir D    VECSYNC_DATA_DIR, default ./data
`;

const SHUTDOWN_DEADLINE_MS = 10_000;

function configFrom(args: string[]) {
  // Before anything is written: every file the service creates is 0600, every folder 0700.
  process.umask(PRIVATE_UMASK);
  const config = resolveConfig(parseFlags(args, SERVE_FLAGS), process.env);
  makePrivate(config.dataDir);
  return { config, logger: createLogger(config.logLevel) };
}

async function serve(args: string[]): Promise<void> {
  const { config, logger } = configFrom(args);
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
}

async function migrateOnly(args: string[]): Promise<void> {
  const { config, logger } = configFrom(args);
  lockDataDir(config.dataDir); // never under a running server's feet
  const database = await openDatabase(config.databaseUrl);
  const { applied } = await migrate(database.client);
  if (applied.length) logger.info({ applied }, "migrations applied");
  database.close();
}

async function version(args: string[]): Promise<number> {
  if (!args.includes("--check")) {
    console.log(`vecsync ${VERSION}`);
    return 0;
  }
  const reports = await selfCheck();
  console.log(JSON.stringify({ version: VERSION, engines: reports }, null, 2));
  return reports.every((r) => r.ok) ? 0 : 1;
}

async function run(argv: string[]): Promise<number> {
  const [command = "help", ...args] = argv;
  switch (command) {
    case "serve":
      await serve(args);
      return -1; // keeps running
    case "migrate":
      await migrateOnly(args);
      console.log("migrations applied");
      return 0;
    case "version":
    case "--version":
      return version(args);
    case "demo":
      return runDemo(args, process.env);
    case "help":
    case "--help":
    case "-h":
      console.log(HELP);
      return 0;
    default:
      console.error(`vecsync: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}

try {
  const code = await run(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (err) {
  if (err instanceof ConfigError || err instanceof StartRefused) {
    console.error(`vecsync: ${err.message}`);
    process.exit(2);
  }
  console.error(`vecsync: ${(err as Error).message}`);
  process.exit(1);
}
