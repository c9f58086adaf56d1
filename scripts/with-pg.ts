// `bun run scripts/with-pg.ts <command…>`: runs the command with the tests' own PostgreSQL
// (scripts/test-pg/cluster.ts) named in VECSYNC_TEST_PG_URL and VECSYNC_BENCH_PG_URL, and stops
// the cluster afterwards if this run started it. `npm test` is this around `bun test`; CI's
// freshness smoke is this around `bun run bench pipeline`. A missing prerequisite that cannot be
// provisioned stops it at once, with one line saying what to install.
import { ensureCluster, MissingPrerequisite, type Cluster } from "./test-pg/cluster.ts";

const command = process.argv.slice(2);
if (command.length === 0) {
  console.error("usage: bun run scripts/with-pg.ts <command…>");
  process.exit(2);
}

let cluster: Cluster;
try {
  cluster = await ensureCluster();
} catch (err) {
  console.error(`test-pg: ${err instanceof MissingPrerequisite ? "" : "error: "}${(err as Error).message}`);
  process.exit(1);
}

const child = Bun.spawn(command, {
  stdio: ["inherit", "inherit", "inherit"],
  env: { ...process.env, VECSYNC_TEST_PG_URL: cluster.url, VECSYNC_BENCH_PG_URL: cluster.url, BENCH_PG_URL: cluster.url },
});
// Ctrl-C reaches the child through the terminal's process group; wait for it to finish.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
const code = await child.exited;
if (cluster.startedHere) await cluster.stop();
process.exit(code);
