// Test helpers (STYLE 9): each test file owns its world — a fresh data dir, the app in process or
// a real process on port 0, throwaway Postgres databases — and cleans it up with `await using`.
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { resolveConfig, type Config } from "../src/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createLogger } from "../src/shared/log.ts";
import { openVectorStore, type Services } from "../src/services.ts";
import { buildServices } from "../src/wiring.ts";
import { createHttpApp } from "../src/server.ts";
import type { Clock } from "../src/shared/clock.ts";

export const ROOT = resolve(import.meta.dir, "..");
export const BUN = process.execPath;

export type TempDir = { path: string } & Disposable;

export function tempDir(prefix = "vecsync-test-"): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

export type TestApp = {
  services: Services;
  config: Config;
  /** Calls the app in process: no socket, the same handler the server runs. */
  request(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string>; rawBody?: string | Uint8Array }): Promise<Response>;
} & AsyncDisposable;

/** A fully built service on a fresh data dir, called through `app.handle`. */
export async function createTestApp(opts: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestApp> {
  const dir = tempDir();
  const config = resolveConfig({ "data-dir": dir.path }, { VECSYNC_LOG_LEVEL: "silent", ...opts.env });
  const database = await openDatabase(config.databaseUrl);
  await migrate(database.client);
  const logger = createLogger(config.logLevel);
  const services = buildServices(config, database, await openVectorStore(config, database, logger), logger, opts.clock);
  const app = createHttpApp(services);
  return {
    services,
    config,
    request(method, path, { body, headers = {}, rawBody } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (rawBody !== undefined) init.body = rawBody;
      else if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      return app.handle(new Request(`http://vecsync.test${path}`, init));
    },
    async [Symbol.asyncDispose]() {
      await services.scheduler.stop();
      await services.platform.close();
      await services.vectors.close();
      database.close();
      dir[Symbol.dispose]();
    },
  };
}

export type RunningProcess = {
  url: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  stop(signal?: NodeJS.Signals): Promise<number>;
} & AsyncDisposable;

/** Reads a stream into a growing string; resolves `firstLine` once a newline arrives. */
function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const { promise: firstLine, resolve: resolveLine } = Promise.withResolvers<string>();
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      const nl = text.indexOf("\n");
      if (nl !== -1) resolveLine(text.slice(0, nl));
    }
    resolveLine(text);
  })();
  return { firstLine, text: () => text };
}

/**
 * Starts the real service (`bun src/main.ts serve`, or a given command such as the compiled
 * binary) on port 0 and waits for its `listening` line.
 */
export async function startProcess(opts: { cmd?: string[]; env?: Record<string, string>; dataDir?: string; cwd?: string; timeoutMs?: number; stderrTo?: string } = {}): Promise<RunningProcess> {
  const owned = opts.dataDir ? null : tempDir();
  const dataDir = opts.dataDir ?? owned!.path;
  const cmd = [...(opts.cmd ?? [BUN, join(ROOT, "src/main.ts")]), "serve", "--port", "0", "--data-dir", dataDir];
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, VECSYNC_LOG_LEVEL: "warn", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    // `stderrTo`: the log goes to that file (e.g. one on the data dir's disk), as under a supervisor.
    stderr: opts.stderrTo ? Bun.file(opts.stderrTo) : "pipe",
  }) as Bun.Subprocess<"ignore", "pipe", "pipe">;
  const out = collect(proc.stdout);
  const err = opts.stderrTo ? { text: () => `(written to ${opts.stderrTo})` } : collect(proc.stderr);
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const line = await Promise.race([
    out.firstLine,
    proc.exited.then((code) => `exited with ${code}`),
    Bun.sleep(timeoutMs).then(() => `no listening line after ${timeoutMs} ms`),
  ]);
  const match = line.match(/^vecsync listening on (http:\/\/\S+)$/);
  if (!match) {
    proc.kill("SIGKILL");
    throw new Error(`service did not start: ${line}\nstderr: ${err.text()}`);
  }
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (proc.exitCode === null && !proc.killed) proc.kill(signal);
    return proc.exited;
  };
  return {
    url: match[1]!,
    proc,
    dataDir,
    stdout: out.text,
    stop,
    async [Symbol.asyncDispose]() {
      await stop("SIGKILL");
      owned?.[Symbol.dispose]();
    },
  };
}

export const PG_ADMIN_URL = process.env.VECSYNC_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export type ThrowawayDatabase = { url: string; name: string; sql: postgres.Sql } & AsyncDisposable;

/** Creates a Postgres database with a random name and drops it on dispose. */
export async function throwawayPostgres(): Promise<ThrowawayDatabase> {
  const name = `vecsync_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  return {
    url,
    name,
    sql,
    async [Symbol.asyncDispose]() {
      // DROP DATABASE refuses while a replication slot exists (even WITH FORCE), and a slot left
      // behind keeps WAL on the shared server for good. A walsender outlives its client by a
      // moment: each pass ends the sessions holding slots, drops the free ones, and tries again.
      for (let attempt = 0; ; attempt++) {
        await sql`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = current_database() AND active_pid IS NOT NULL`.catch(() => {});
        await sql`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database() AND NOT active`.catch(() => {});
        try {
          await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== "55006" || attempt >= 50) throw err;
          await Bun.sleep(100);
        }
      }
      await sql.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    },
  };
}

/** Waits for a condition by polling, for state that changes in the background. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await Bun.sleep(everyMs);
  }
}
