// The real process, as docs/running.md says it starts and stops.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, eventually, ROOT, startProcess, tempDir } from "../harness.ts";
import { VERSION } from "../../src/version.ts";
import { json } from "../helpers/http.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const run = (args: string[], env: Record<string, string> = {}) => {
  const out = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), ...args], { cwd: ROOT, env: { ...process.env, VECSYNC_LOG_LEVEL: "silent", ...env } });
  return { code: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() };
};

describe("happy", () => {
  test("serve prints the listening line first, answers health, and exits 0 on SIGTERM", async () => {
    await using svc = await startProcess();
    expect(svc.stdout().split("\n")[0]).toMatch(/^vecsync listening on http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${svc.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await json(health)).toEqual({ status: "ok" });
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await json(ready)).checks).toEqual({ database: true, scheduler: true, vector_store: true });
    const started = Date.now();
    expect(await svc.stop("SIGTERM")).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("the second stdout line says what runs: version, data dir, API reference", async () => {
    await using svc = await startProcess();
    await eventually(() => svc.stdout().split("\n").length > 2);
    const [listening, banner] = svc.stdout().split("\n");
    const url = listening!.slice("vecsync listening on ".length);
    expect(banner).toBe(`vecsync ${VERSION} · data dir ${svc.dataDir} · API reference ${url}/docs · Ctrl-C stops it`);
  });

  test("SIGINT also shuts down cleanly", async () => {
    await using svc = await startProcess();
    expect(await svc.stop("SIGINT")).toBe(0);
  });

  test("generated secrets are created once, mode 0600, and reused", async () => {
    using dir = tempDir();
    await using first = await startProcess({ dataDir: dir.path });
    await first.stop();
    const jwt = readFileSync(join(dir.path, "jwt.secret"), "utf8");
    const master = readFileSync(join(dir.path, "master.key"), "utf8");
    expect(statSync(join(dir.path, "jwt.secret")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, "master.key")).mode & 0o777).toBe(0o600);
    expect(Buffer.from(master.trim(), "base64").length).toBe(32);
    await using second = await startProcess({ dataDir: dir.path });
    await second.stop();
    expect(readFileSync(join(dir.path, "jwt.secret"), "utf8")).toBe(jwt);
    expect(readFileSync(join(dir.path, "master.key"), "utf8")).toBe(master);
  });

  test("environment variables configure the process (VECSYNC_DATA_DIR, VECSYNC_HOST)", async () => {
    using dir = tempDir();
    const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0"], {
      cwd: ROOT,
      env: { ...process.env, VECSYNC_DATA_DIR: dir.path, VECSYNC_HOST: "127.0.0.1", VECSYNC_LOG_LEVEL: "silent" },
      stdout: "pipe",
    });
    const reader = proc.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toMatch(/^vecsync listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(statSync(join(dir.path, "vecsync.db")).isFile()).toBe(true);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("migrate applies migrations and is idempotent; version prints the version", () => {
    using dir = tempDir();
    const first = run(["migrate", "--data-dir", dir.path]);
    expect(first.code).toBe(0);
    expect(run(["migrate", "--data-dir", dir.path]).code).toBe(0);
    const version = run(["version"]);
    expect(version.stdout.trim()).toMatch(/^vecsync \d+\.\d+\.\d+$/);
    expect(run(["help"]).stdout).toContain("serve");
  });
});

describe("errors", () => {
  test.each([
    [["serve", "--port", "abc"], {}, "--port must be an integer"],
    [["serve"], { VECSYNC_PORT: "70000" }, "VECSYNC_PORT must be an integer"],
    [["serve"], { VECSYNC_MASTER_KEY: "c2hvcnQ=" }, "VECSYNC_MASTER_KEY must be a base64 32-byte key"],
    [["serve"], { VECSYNC_SYNC_INTERVAL: "-3" }, "VECSYNC_SYNC_INTERVAL must be"],
    [["serve", "--bogus", "1"], {}, "unknown flag --bogus"],
  ] as [string[], Record<string, string>, string][])("%p %p stops start-up with one line", (args, env, message) => {
    using dir = tempDir();
    const out = run([...args, "--data-dir", dir.path], env);
    expect(out.code).toBe(2);
    const lines = out.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(message);
  });

  test("the data-dir lock dies with its holder: after kill -9 the next serve starts", async () => {
    using dir = tempDir();
    const first = await startProcess({ dataDir: dir.path });
    expect(readFileSync(join(dir.path, "lock"), "utf8").trim()).toBe(String(first.proc.pid));
    await first.stop("SIGKILL");
    await using next = await startProcess({ dataDir: dir.path });
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(readFileSync(join(dir.path, "lock"), "utf8").trim()).toBe(String(next.proc.pid));
  });

  test("migrate on a data dir a server holds exits 2 naming the server", async () => {
    using dir = tempDir();
    await using server = await startProcess({ dataDir: dir.path });
    const out = run(["migrate", "--data-dir", dir.path]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`in use by process ${server.proc.pid}`);
  });

  test("an unknown command exits 2 with the help text", () => {
    const out = run(["frobnicate"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('unknown command "frobnicate"');
  });
});

describe("errors: host lists", () => {
  test("a malformed VECSYNC_DENY_HOSTS entry stops start-up with one line naming it", () => {
    using dir = tempDir();
    const out = run(["serve", "--data-dir", dir.path], { VECSYNC_DENY_HOSTS: "10.0.0.0/99" });
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
    expect(out.stderr).toContain("VECSYNC_DENY_HOSTS");
  });
});
