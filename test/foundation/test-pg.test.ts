// The test command's own PostgreSQL (scripts/test-pg/cluster.ts), on this machine's real
// binaries: a fresh folder each, a port of its own, stopped at the end.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { ensureCluster, ensurePgvector, findBinaries, MissingPrerequisite, type Cluster } from "../../scripts/test-pg/cluster.ts";

// initdb and a server start: seconds each on a loaded 2-core machine.
setDefaultTimeout(60_000);

const folders: string[] = [];
const clusters: Cluster[] = [];
afterAll(async () => {
  for (const c of clusters) await c.stop();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

function folder(): string {
  const f = mkdtempSync(join(tmpdir(), "vecsync-test-pg-"));
  chmodSync(f, 0o755); // the server runs as `postgres` when the tests run as root
  folders.push(f);
  return f;
}

/**
 * A port from a band no other test uses, with a listener-free check left to the cluster. Below
 * Linux's ephemeral range (32768-60999): a client socket elsewhere on the machine cannot take it
 * between a cluster's stop and its next start.
 */
const port = () => 24_000 + Math.floor(Math.random() * 4_000);
const quiet = () => {};

async function walLevel(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: quiet });
  try {
    const [row] = await sql<{ wal_level: string }[]>`SHOW wal_level`;
    return row!.wal_level;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

describe("the tests' own PostgreSQL", () => {
  test("a new folder: initdb, started with wal_level logical; a second call reuses it", async () => {
    const dir = join(folder(), "pg");
    const lines: string[] = [];
    const first = await ensureCluster({ dir, port: port(), log: (l) => lines.push(l) });
    clusters.push(first);
    expect(first.startedHere).toBe(true);
    expect(await walLevel(first.url)).toBe("logical");
    expect(lines.some((l) => l.startsWith("initdb "))).toBe(true);
    const again = await ensureCluster({ dir, port: first.port, log: quiet });
    expect(again).toMatchObject({ url: first.url, startedHere: false });
  });

  test("a cluster running with wal_level replica is restarted with logical", async () => {
    const dir = join(folder(), "pg");
    const p = port();
    const made = await ensureCluster({ dir, port: p, log: quiet });
    clusters.push(made);
    await made.stop();
    const { bindir } = findBinaries();
    const asPostgres = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
    const start = Bun.spawnSync([...asPostgres, join(bindir, "pg_ctl"), "-D", dir, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", `-c port=${made.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c wal_level=replica`, "start"]);
    // Failed once in CI in 1.2 s, with nothing to read: say what pg_ctl and the server said.
    if (start.exitCode !== 0) throw new Error(`pg_ctl start: ${start.stdout}${start.stderr}\nserver.log: ${readFileSync(join(dir, "server.log"), "utf8").slice(-2_000)}`);
    expect(await walLevel(made.url)).toBe("replica");
    const lines: string[] = [];
    const fixed = await ensureCluster({ dir, port: made.port, log: (l) => lines.push(l) });
    expect(fixed.startedHere).toBe(true);
    expect(await walLevel(fixed.url)).toBe("logical");
    expect(lines.join("\n")).toContain("wal_level replica; restarting it with logical");
  });

  test("another program on the private port: the next free port, said so", async () => {
    let p = port();
    const listen = (at: number) => Bun.listen({ hostname: "127.0.0.1", port: at, socket: { data() {} } });
    let squatter: ReturnType<typeof listen> | null = null;
    while (!squatter) {
      try {
        squatter = listen(p);
      } catch {
        p++;
      }
    }
    try {
      const lines: string[] = [];
      const c = await ensureCluster({ dir: join(folder(), "pg"), port: p, log: (l) => lines.push(l) });
      clusters.push(c);
      expect(c.port).toBeGreaterThan(p);
      expect(lines).toContain(`port ${p} is taken by another program; using ${c.port}`);
      expect(await walLevel(c.url)).toBe("logical");
    } finally {
      squatter.stop(true);
    }
  });
});

describe("pgvector in the installation", () => {
  test("present: nothing is built", () => {
    const share = folder();
    mkdirSync(join(share, "extension"));
    writeFileSync(join(share, "extension", "vector.control"), "default_version = '0.8.0'\n");
    const lines: string[] = [];
    ensurePgvector(15, share, ["false"], (l) => lines.push(l));
    expect(lines).toEqual([]);
  });

  test("missing: the build command runs and must leave the extension in place", () => {
    const share = folder();
    const control = join(share, "extension", "vector.control");
    const lines: string[] = [];
    ensurePgvector(15, share, ["sh", "-c", `mkdir -p ${join(share, "extension")} && touch ${control}`], (l) => lines.push(l));
    expect(existsSync(control)).toBe(true);
    expect(lines[0]).toContain("pgvector is missing for PostgreSQL 15; building it");
    const broken = folder();
    expect(() => ensurePgvector(15, broken, ["true"], quiet)).toThrow(MissingPrerequisite);
  });

  test("no PostgreSQL binaries: one line saying what is missing", () => {
    const empty = folder();
    let err: unknown;
    try {
      findBinaries(empty);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MissingPrerequisite);
    expect((err as Error).message).toBe(`no PostgreSQL server binaries (initdb, pg_ctl, postgres) in VECSYNC_PG_BINDIR=${empty}`);
  });
});

describe("bun run scripts/with-pg.ts", () => {
  test("a prerequisite missing: exit 1 at once, one line on stderr, the command never run", () => {
    const marker = join(folder(), "ran");
    const p = Bun.spawnSync([process.execPath, "run", join(import.meta.dir, "../../scripts/with-pg.ts"), "touch", marker], {
      env: { ...process.env, VECSYNC_PG_BINDIR: "/nonexistent/bin" },
      stderr: "pipe",
    });
    expect(p.exitCode).toBe(1);
    expect(p.stderr.toString()).toBe("test-pg: no PostgreSQL server binaries (initdb, pg_ctl, postgres) in VECSYNC_PG_BINDIR=/nonexistent/bin\n");
    expect(existsSync(marker)).toBe(false);
  });
});
