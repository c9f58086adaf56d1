// The single binary (issue: one binary): built fresh by the real build script, copied alone into
// an empty directory, run with a clean environment and an empty native cache. Every native engine
// must load from what the binary carries, and the service must serve, migrate and stop cleanly.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, startProcess, tempDir } from "../harness.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

/** The native engines, written out to the cache on first use. */
const NATIVES = ["libsql", "usearch", "graph", "duckdb"];
/** What `version --check` reports: the natives, and the semantic model, read in place from the binary. */
const ENGINES = [...NATIVES, "write-thread", "local-semantic-v1"];
const BUILD_TIMEOUT_MS = 180_000;

const work = tempDir("vecsync-binary-");
const appDir = join(work.path, "app");
const binary = join(appDir, "vecsync");

/** A fresh, empty HOME (so a fresh native cache) per call. */
function freshHome(): string {
  const home = join(work.path, `home-${crypto.randomUUID().slice(0, 8)}`);
  mkdirSync(home);
  return home;
}

/** Nothing from this machine's environment but PATH: no NODE_PATH, no cache settings. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", ...extra };
}

/**
 * As root (CI, this project's machines), a command run in a network namespace of its own: no
 * interface but a down loopback, so a model or engine fetched from anywhere would fail the check.
 */
const NO_NETWORK = process.getuid?.() === 0 && Bun.spawnSync(["unshare", "-n", "true"]).exitCode === 0 ? ["unshare", "-n"] : [];

async function versionCheck(env: Record<string, string>, prefix: string[] = []) {
  const proc = Bun.spawn([...prefix, binary, "version", "--check"], { cwd: appDir, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr, report: JSON.parse(stdout) as { version: string; engines: { engine: string; ok: boolean; version?: string; error?: string }[] } };
}

function expectEveryEngineOk(report: Awaited<ReturnType<typeof versionCheck>>["report"]) {
  expect(report.engines.map((e) => e.engine).sort()).toEqual([...ENGINES].sort());
  for (const engine of report.engines) {
    expect({ engine: engine.engine, ok: engine.ok, error: engine.error }).toEqual({ engine: engine.engine, ok: true, error: undefined });
    expect(engine.version).toMatch(/\d+\.\d+\.\d+/);
  }
}

const cachedEngines = (root: string) => readdirSync(join(root, "native")).map((d) => d.replace(/-\d.*$/, "")).sort();

beforeAll(() => {
  const outfile = join(work.path, "build", "vecsync");
  const started = performance.now();
  const build = Bun.spawnSync([BUN, "run", join(ROOT, "scripts/build.ts"), "--outfile", outfile], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}${build.stdout.toString()}`);
  console.log(`${build.stdout.toString().trim()} (test build: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  // Only the binary travels: an empty directory, far from node_modules.
  mkdirSync(appDir);
  copyFileSync(outfile, binary);
  chmodSync(binary, 0o755);
  expect(readdirSync(appDir)).toEqual(["vecsync"]);
}, BUILD_TIMEOUT_MS);

afterAll(() => work[Symbol.dispose]());

describe("happy", () => {
  test("version --check loads every engine and embeds with the semantic model from the binary alone, with no network", async () => {
    if (process.getuid?.() === 0) expect(NO_NETWORK).toEqual(["unshare", "-n"]);
    const home = freshHome();
    const { code, stderr, report } = await versionCheck(cleanEnv({ HOME: home }), NO_NETWORK);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expectEveryEngineOk(report);
    // The engines were written out into the fresh cache under HOME, one directory each.
    expect(cachedEngines(join(home, ".cache", "vecsync"))).toEqual([...NATIVES].sort());
  });

  test("concurrent first starts share one cache and both succeed", async () => {
    const home = freshHome();
    const runs = await Promise.all([versionCheck(cleanEnv({ HOME: home })), versionCheck(cleanEnv({ HOME: home }))]);
    for (const run of runs) {
      expect(run.code).toBe(0);
      expectEveryEngineOk(run.report);
    }
    const nativeRoot = join(home, ".cache", "vecsync", "native");
    const leftovers = readdirSync(nativeRoot).flatMap((d) => readdirSync(join(nativeRoot, d))).filter((f) => f.endsWith(".tmp"));
    expect(leftovers).toEqual([]);
  });

  test("falls back to a private directory in TMPDIR when HOME cannot be written", async () => {
    const tmp = freshHome();
    const { code, report } = await versionCheck(cleanEnv({ HOME: "/proc/vecsync-no-home", TMPDIR: tmp }));
    expect(code).toBe(0);
    expectEveryEngineOk(report);
    const root = join(tmp, `vecsync-${process.getuid?.() ?? "user"}`);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(cachedEngines(root)).toEqual([...NATIVES].sort());
  });

  test("serves a fresh data dir: health, readiness, OpenAPI, the embedded docs script, a write, clean SIGTERM", async () => {
    // startProcess starts from this process's environment; blank out what could leak in.
    const log = join(work.path, `serve-${crypto.randomUUID().slice(0, 8)}.log`);
    await using proc = await startProcess({ cmd: [binary], cwd: appDir, env: { HOME: freshHome(), NODE_PATH: "", XDG_CACHE_HOME: "" }, stderrTo: log });

    const health = await fetch(`${proc.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    // Ready means the migrations ran on the fresh data dir and the scheduler is up.
    const ready = await fetch(`${proc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(readdirSync(proc.dataDir)).toContain("vecsync.db");

    const openApi = (await (await fetch(`${proc.url}/v1/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(openApi.openapi).toBe("3.1.0");
    expect(Object.keys(openApi.paths)).toContain("/v1/vector-tables/{vector_table_id}/query");

    const script = await fetch(`${proc.url}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toStartWith("text/javascript");
    const scalarSource = Bun.resolveSync("@scalar/api-reference/browser/standalone.js", ROOT);
    expect((await script.arrayBuffer()).byteLength).toBe(statSync(scalarSource).size);

    // A sign-in code is stored by a write batch on the write connection (db/fast-writes.ts).
    expect((await fetch(`${proc.url}/v1/auth/otp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "binary@example.com" }) })).status).toBe(200);

    const started = performance.now();
    expect(await proc.stop("SIGTERM")).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await Bun.file(log).text()).not.toContain("write thread");
  });
  test("the CLI commands run from the binary: backup of its own database while it serves, status against it", async () => {
    await using proc = await startProcess({ cmd: [binary], cwd: appDir, env: { HOME: freshHome(), NODE_PATH: "", XDG_CACHE_HOME: "" } });
    const run = async (args: string[]) => {
      const p = Bun.spawn([binary, ...args], { cwd: appDir, env: cleanEnv({ HOME: freshHome() }), stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { stdout, stderr, code };
    };
    const file = join(work.path, "binary-backup.db");
    const backup = await run(["backup", "--to", file, "--data-dir", proc.dataDir]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backup written: ${file}`);
    const status = await run(["status", "--url", proc.url, "--api-key", "vsk_" + "a".repeat(40)]);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/^vecsync: unauthorized: .+\n$/);
  });
});
