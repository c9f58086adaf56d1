// The tests' own PostgreSQL: a private cluster made with the machine's PostgreSQL binaries, in a
// cache folder, on a port of its own, with what the tests need (wal_level = logical for cdc,
// pgvector for platform tables). The machine's own server is never touched or reconfigured.
//
// - Binaries: VECSYNC_PG_BINDIR, else the newest /usr/lib/postgresql/<major>/bin (Debian), else
//   `initdb` on PATH. None: a one-line error saying what to install.
// - pgvector: built into that installation when missing, by the script CI uses
//   (.ci/pgvector-build, Debian's source package); that needs root or passwordless sudo, and
//   without them the run stops with one line saying the command to run.
// - Folder: VECSYNC_TEST_PG_DIR, else /var/tmp/vecsync-test-pg-<uid>/<major>; `initdb` there once
//   (as the `postgres` user when run as root: initdb refuses root).
// - Port: VECSYNC_TEST_PG_PORT (default 54329); when another program holds it, the next free one.
// - Settings are given at every start (pg_ctl -o), so a cluster left running with others (say
//   wal_level = replica) is restarted with these; one already running with them is reused.
//   Durability is off (fsync, full_page_writes): the cluster holds throwaway test databases.
//   synchronous_commit stays on: logical decoding and pg_replication_slot_advance go only as
//   far as the flushed WAL, and the cdc tests count on a commit being decodable at once.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";

export const DEFAULT_PORT = 54329;
const PORT_TRIES = 20;

/** A prerequisite that cannot be provisioned here: the message says what to do, in one line. */
export class MissingPrerequisite extends Error {}

export type ClusterOptions = {
  bindir?: string;
  dir?: string;
  port?: number;
  /** Where pgvector's control file is looked for (`<sharedir>/extension/vector.control`). */
  sharedir?: string;
  /** What builds pgvector when it is missing (default: .ci/pgvector-build <major>). */
  buildPgvector?: string[];
  log?: (line: string) => void;
};

export type Cluster = { url: string; port: number; dir: string; startedHere: boolean; stop(): Promise<void> };

const ROOT = join(import.meta.dir, "../..");
const isRoot = () => process.getuid?.() === 0;

function run(cmd: string[], opts: { asPostgres?: boolean; quiet?: boolean } = {}): { ok: boolean; out: string } {
  const argv = opts.asPostgres && isRoot() ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe", env: { ...process.env, LC_ALL: "C.UTF-8" } });
  return { ok: p.exitCode === 0, out: `${p.stdout.toString()}${p.stderr.toString()}`.trim() };
}

/** The PostgreSQL binaries to use and their major version. */
export function findBinaries(override = process.env.VECSYNC_PG_BINDIR): { bindir: string; major: number } {
  const candidates: string[] = [];
  if (override) candidates.push(override);
  else {
    const debian = "/usr/lib/postgresql";
    if (existsSync(debian)) {
      const majors = readdirSync(debian).map(Number).filter((n) => n > 0).sort((a, b) => b - a);
      candidates.push(...majors.map((m) => join(debian, String(m), "bin")));
    }
    const onPath = Bun.which("initdb");
    if (onPath) candidates.push(join(onPath, ".."));
  }
  for (const bindir of candidates) {
    if (!existsSync(join(bindir, "initdb")) || !existsSync(join(bindir, "pg_ctl"))) continue;
    const version = run([join(bindir, "postgres"), "--version"]).out.match(/(\d+)(?:\.\d+)?/);
    if (version) return { bindir, major: Number(version[1]) };
  }
  throw new MissingPrerequisite(
    override
      ? `no PostgreSQL server binaries (initdb, pg_ctl, postgres) in VECSYNC_PG_BINDIR=${override}`
      : "no PostgreSQL server binaries found (initdb, pg_ctl): install PostgreSQL (Debian: apt install postgresql)",
  );
}

/** pgvector in the installation: there, or built now, or a MissingPrerequisite saying how. */
export function ensurePgvector(major: number, sharedir: string, build: string[] | undefined, log: (line: string) => void): void {
  const control = join(sharedir, "extension", "vector.control");
  if (existsSync(control)) return;
  const command = build ?? ["bash", join(ROOT, ".ci/pgvector-build"), String(major)];
  const canBuild = build !== undefined || isRoot() || run(["sudo", "-n", "true"]).ok;
  if (!canBuild) {
    throw new MissingPrerequisite(`pgvector is not installed for PostgreSQL ${major} and building it needs root: run \`sudo bash .ci/pgvector-build ${major}\` once`);
  }
  log(`pgvector is missing for PostgreSQL ${major}; building it (${command.join(" ")})`);
  const argv = build !== undefined || isRoot() ? command : ["sudo", "-n", ...command];
  const p = Bun.spawnSync(argv, { stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0 || !existsSync(control)) throw new MissingPrerequisite(`building pgvector failed (exit ${p.exitCode}); see the lines above`);
}

/** Whether nothing listens on 127.0.0.1:port (a bind there succeeds). */
function portFree(port: number): boolean {
  try {
    const server = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    server.stop(true);
    return true;
  } catch {
    return false;
  }
}

async function settings(url: string): Promise<{ walLevel: string; dataDirectory: string } | null> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    const [row] = await sql<{ wal_level: string; data_directory: string }[]>`SELECT current_setting('wal_level') AS wal_level, current_setting('data_directory') AS data_directory`;
    return row ? { walLevel: row.wal_level, dataDirectory: row.data_directory } : null;
  } catch {
    return null;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

const urlFor = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

/** The port a running cluster in `dir` listens on (postmaster.pid's fourth line). */
function runningPort(dir: string): number | null {
  try {
    const port = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[3]);
    return port > 0 ? port : null;
  } catch {
    return null;
  }
}

export async function ensureCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const log = opts.log ?? ((line: string) => console.error(`test-pg: ${line}`));
  const { bindir, major } = opts.bindir ? findBinaries(opts.bindir) : findBinaries();
  const sharedir = opts.sharedir ?? (bindir.startsWith("/usr/lib/postgresql/") ? `/usr/share/postgresql/${major}` : run([join(bindir, "pg_config"), "--sharedir"]).out);
  ensurePgvector(major, sharedir, opts.buildPgvector, log);

  const dir = opts.dir ?? process.env.VECSYNC_TEST_PG_DIR ?? `/var/tmp/vecsync-test-pg-${process.getuid?.() ?? 0}/${major}`;
  if (isRoot() && !run(["id", "postgres"]).ok) throw new MissingPrerequisite("running as root, and initdb refuses root: create a `postgres` user or run the tests as another user");
  if (!existsSync(join(dir, "PG_VERSION"))) {
    // The folders above it stay traversable: the server runs as `postgres` when we are root.
    mkdirSync(join(dir, ".."), { recursive: true, mode: 0o755 });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (isRoot()) run(["chown", "postgres:", dir]);
    log(`initdb ${dir} (PostgreSQL ${major})`);
    const init = run([join(bindir, "initdb"), "-D", dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-instructions"], { asPostgres: true });
    if (!init.ok) throw new Error(`initdb failed: ${init.out.split("\n").slice(-3).join(" ")}`);
  }

  const pgCtl = (...args: string[]) => run([join(bindir, "pg_ctl"), "-D", dir, ...args], { asPostgres: true });
  const wanted = opts.port ?? Number(process.env.VECSYNC_TEST_PG_PORT ?? DEFAULT_PORT);
  const stop = async () => void pgCtl("-m", "fast", "-w", "stop");

  // Running already (an earlier run's, or another run's now): reuse it when its settings are ours.
  const current = pgCtl("status").ok ? runningPort(dir) : null;
  if (current !== null) {
    const seen = await settings(urlFor(current));
    if (seen?.walLevel === "logical") {
      log(`reusing the cluster in ${dir} on port ${current}`);
      return { url: urlFor(current), port: current, dir, startedHere: false, stop };
    }
    log(`the cluster in ${dir} runs with wal_level ${seen?.walLevel ?? "unknown"}; restarting it with logical`);
    await stop();
  }

  let port = wanted;
  while (!portFree(port)) {
    if (port - wanted >= PORT_TRIES) throw new MissingPrerequisite(`ports ${wanted}-${port} on 127.0.0.1 are all taken: set VECSYNC_TEST_PG_PORT to a free one`);
    port++;
  }
  if (port !== wanted) log(`port ${wanted} is taken by another program; using ${port}`);
  const options = [
    `-c port=${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c wal_level=logical",
    "-c max_replication_slots=64",
    "-c max_wal_senders=64",
    "-c max_connections=300",
    "-c fsync=off",
    "-c full_page_writes=off",
  ].join(" ");
  const started = pgCtl("-l", join(dir, "server.log"), "-w", "-t", "60", "-o", options, "start");
  if (!started.ok) throw new Error(`pg_ctl start failed: ${started.out.split("\n").slice(-3).join(" ")} (log: ${join(dir, "server.log")})`);
  const seen = await settings(urlFor(port));
  if (seen?.walLevel !== "logical") throw new Error(`the cluster started on port ${port} answers wal_level ${seen?.walLevel ?? "nothing"}`);
  log(`PostgreSQL ${major} in ${dir} on 127.0.0.1:${port} (wal_level logical, pgvector)`);
  return { url: urlFor(port), port, dir, startedHere: true, stop };
}
