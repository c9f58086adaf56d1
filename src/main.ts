#!/usr/bin/env bun
// The CLI and the binary's entry: reads the command line and hands it to its command. Commands are
// imported when chosen, so that `vecsync status` does not load the whole service before its one
// HTTP call; the error classes are the light modules' own.
import { CliError } from "./cli/errors.ts";
import { ConfigError } from "./config.ts";
import { StartRefused } from "./data-dir.ts";
import { VERSION } from "./version.ts";

const HELP = `vecsync ${VERSION} — keeps vector embeddings of a database table current

usage: vecsync <command> [flags]            vecsync <command> --help for a command's flags

service:
  serve      migrate the database, start the scheduler and serve HTTP (REST /v1, tRPC /trpc)
  migrate    apply database migrations and exit
  backup     --to FILE: a consistent copy of the database while the service runs (not the keys)
  restore    --from FILE: a backup as the database of a new data directory
  version    print the version; --check also opens every embedded engine
  demo       a guided tour on a throwaway service and sample table, printing each step's curl
             (needs a local Postgres; \`bun run demo\` in a checkout falls back to a test server;
             vecsync demo --help for more)
  help       this text

against a running service (--url / VECSYNC_URL, --api-key / VECSYNC_API_KEY):
  status     vector tables: state, rows synced/total, pending, staleness, sync mode (--json)
  tasks      tasks with progress bars; --watch redraws every second (--until-done, --json)

flags (serve, migrate, backup, restore):
  --port N        VECSYNC_PORT, default 8080 (0 picks a free port; serve only)
  --host H        VECSYNC_HOST, default 127.0.0.1 (serve only)
  --data-dir D    VECSYNC_DATA_DIR, default ./data
`;

async function version(args: string[]): Promise<number> {
  if (!args.includes("--check")) {
    console.log(`vecsync ${VERSION}`);
    return 0;
  }
  const { selfCheck } = await import("./selfcheck.ts");
  const reports = await selfCheck();
  console.log(JSON.stringify({ version: VERSION, engines: reports }, null, 2));
  return reports.every((r) => r.ok) ? 0 : 1;
}

async function run(argv: string[]): Promise<number> {
  const [command = "help", ...args] = argv;
  switch (command) {
    case "serve":
      await (await import("./serve.ts")).serve(args);
      return -1; // keeps running
    case "migrate":
      await (await import("./serve.ts")).migrateOnly(args);
      console.log("migrations applied");
      return 0;
    case "version":
    case "--version":
      return version(args);
    case "demo":
      return (await import("./demo/index.ts")).runDemo(args, process.env);
    case "status":
      return (await import("./cli/status.ts")).runStatus(args, process.env);
    case "tasks":
      return (await import("./cli/tasks.ts")).runTasks(args, process.env);
    case "backup":
      return (await import("./cli/backup.ts")).runBackup(args, process.env);
    case "restore":
      return (await import("./cli/restore.ts")).runRestore(args, process.env);
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
  if (err instanceof CliError) {
    console.error(`vecsync: ${err.message}`);
    process.exit(err.exitCode);
  }
  if (err instanceof ConfigError || err instanceof StartRefused) {
    console.error(`vecsync: ${err.message}`);
    process.exit(2);
  }
  console.error(`vecsync: ${(err as Error).message}`);
  process.exit(1);
}
