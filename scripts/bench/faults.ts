// `bun run bench faults [--cycles N] [--seed S] [--rows R] [--per-world K] [--cdc] [--damage] [--catch-up-ms MS]`
// The fault-injection harness of test/faults/ run long: worlds of R rows (default: drawn per
// world between 3,000 and 20,000 from its seed), each for K cycles (default 10) of seeded
// workloads and interruptions (SIGTERM, SIGKILL mid-work, in the shutdown checkpoint, during
// start-up's index load) with restarts on the same data dir, seeds S, S+1, … until N cycles
// (default 20) ran. --cdc makes every world's table a cdc one (reconciling an hour apart) and adds
// the change-feed faults of issue 14 (slot or publication dropped, slot advanced, walsender or
// every backend of the source ended), most of them healed by the running process with no restart.
// --damage also runs the index-file damage and WAL-cut suite first.
// Prints cycles, restarts, kills, rows checked, feed faults (--cdc) and failures with their seeds;
// exits 1 on any failure. Replay a failing world with `--seed <its seed> --rows <its rows>
// --cycles <K> --per-world <K>` (and --cdc if it was one).
// Uses VECSYNC_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), like the tests.
import { parseArgs } from "node:util";
import { runDamage } from "../../test/faults/damage-run.ts";
import { runSeed, type Failure, type Report } from "../../test/faults/runner.ts";
import { prng } from "../../test/faults/schedule.ts";
import { disposeAllWorlds } from "../../test/faults/world.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(3),
  options: {
    cycles: { type: "string", default: "20" },
    seed: { type: "string", default: "1" },
    rows: { type: "string" },
    "per-world": { type: "string", default: "10" },
    cdc: { type: "boolean", default: false },
    damage: { type: "boolean", default: false },
    compact: { type: "boolean", default: false },
    "catch-up-ms": { type: "string" },
  },
});

const totalCycles = Number(args.cycles);
const perWorld = Number(args["per-world"]);
const catchUpMs = args["catch-up-ms"] ? Number(args["catch-up-ms"]) : undefined;
const log = (line: string) => console.error(`${new Date().toISOString().slice(11, 19)} ${line}`);

// Ctrl-C: kill the service, drop the database, remove the data dir before leaving.
process.on("SIGINT", () => void disposeAllWorlds().finally(() => process.exit(130)));

const reports: (Report & { label: string })[] = [];
const t0 = Date.now();
if (args.damage) {
  log("damage suite: 2,000 rows");
  reports.push({ label: "damage", ...(await runDamage({ rows: 2_000, catchUpMs, log })) });
}
let seed = Number(args.seed);
let done = 0;
while (done < totalCycles) {
  const rows = args.rows ? Number(args.rows) : prng(seed).int(3_000, 20_000);
  const cycles = Math.min(perWorld, totalCycles - done);
  const report = await runSeed({ seed, cycles, rows, cdc: args.cdc, compact: args.compact, catchUpMs, log }).catch((e): Report => ({
    seed, rows, cycles: 0, restarts: 0, kills: 0, rowsChecked: 0, queries: 0, loopAnswers: 0, feedFaults: [], givenUp: 0, ms: 0,
    failures: [{ seed, cycle: -1, kind: "harness_error", detail: String(e?.stack ?? e) }],
  }));
  reports.push({ label: `seed ${seed}${args.cdc ? " cdc" : ""}${args.compact ? " compact" : ""}`, ...report });
  log(`seed ${seed}: ${rows} rows, ${report.cycles}/${cycles} cycles, ${report.failures.length} failures, ${Math.round(report.ms / 1000)} s`);
  // A world that ends early (failed start) still spends its cycles: the run stays bounded.
  done += cycles;
  seed++;
}

const sum = (f: (r: Report) => number) => reports.reduce((a, r) => a + f(r), 0);
const failures: Failure[] = reports.flatMap((r) => r.failures);
const byKind = new Map<string, Set<number>>();
for (const f of failures) byKind.set(f.kind, (byKind.get(f.kind) ?? new Set()).add(f.seed));
console.log(`\nfaults: ${Math.round((Date.now() - t0) / 1000)} s`);
console.log(`  worlds      ${reports.map((r) => `${r.label} (${r.rows} rows)`).join(", ")}`);
console.log(`  cycles      ${sum((r) => r.cycles)}`);
console.log(`  restarts    ${sum((r) => r.restarts)}`);
console.log(`  kills       ${sum((r) => r.kills)}`);
console.log(`  rows checked ${sum((r) => r.rowsChecked)} (${sum((r) => r.queries)} queries), ${sum((r) => r.loopAnswers)} query-loop answers`);
const feedFaults = new Map<string, number>();
for (const f of reports.flatMap((r) => r.feedFaults)) feedFaults.set(f, (feedFaults.get(f) ?? 0) + 1);
if (feedFaults.size) console.log(`  feed faults ${[...feedFaults].map(([f, n]) => `${f} ${n}`).join(", ")}`);
if (sum((r) => r.givenUp)) console.log(`  given up    ${sum((r) => r.givenUp)} fill tasks exhausted by kills (CONTRACT 8), resumed by POST backfill`);
console.log(`  failures    ${failures.length}`);
for (const [kind, seeds] of byKind) console.log(`    ${kind}: seeds ${[...seeds].join(", ")}`);
for (const f of failures) console.log(`  - seed ${f.seed} cycle ${f.cycle} ${f.kind}: ${f.detail.slice(0, 500)}`);
process.exit(failures.length ? 1 : 0);
