// `npm run test:quick`: the inner loop's tier, under 90 s on a loaded 2-core machine — the test
// files that start no process (no service, CLI, fixture, sqld or mount), on the tests' own
// PostgreSQL like `npm test`, less the regression tests and the files listed in SLOW. A file
// starts a process when it, or a helper under test/ that it imports, spawns one; test/harness.ts
// is read by the functions a file calls from it, since it holds both kinds. Extra arguments go to
// `bun test`. `npm test` still runs everything.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");
const HARNESS = join(ROOT, "test/harness.ts");
const SPAWNS = /Bun\.spawn|spawnSync|child_process|\bstartProcess\(|\brunCli\(|\bmountSmallDisk\(|\bprobeInChild\(|\bsqld\b/;

/**
 * In-process files of more than ~3 s each (measured 2026-11-29 on the 2-core machine under load:
 * 3-30 s, 120 s together): large graphs, calibrations, property and recall runs, contract suites
 * of every driver. Without them the tier ran 106 files in 69 s.
 */
const SLOW = new Set([
  "test/drivers/vector-store/mechanism/deeper-checks.test.ts",
  "test/drivers/vector-store/mechanism/calibration.test.ts",
  "test/drivers/vector-store/mechanism/graph.test.ts",
  "test/drivers/vector-store/mechanism/lent-codes.test.ts",
  "test/drivers/vector-store/mechanism/index-keys.test.ts",
  "test/drivers/embeddings/contract.test.ts",
  "test/drivers/platform/warehouse-filters.property.test.ts",
  "test/drivers/platform/recall.test.ts",
  "test/drivers/platform/contract.test.ts",
  "test/drivers/sources/warehouse.test.ts",
  "test/domains/sync/reconcile.test.ts",
  "test/domains/sync/reconcile-race.test.ts",
  "test/domains/sync/cdc-heal.test.ts",
  "test/domains/auth/verify.test.ts",
  "test/domains/auth/otp.test.ts",
  "test/client/generated.test.ts",
  "test/client/filter-types.test.ts",
]);

const seen = new Map<string, boolean>();

/** Whether the file, or a helper under test/ it imports, starts a process. */
function spawns(file: string): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false); // a cycle answers "no" for the file already being read
  const text = readFileSync(file, "utf8");
  let result = file !== HARNESS && SPAWNS.test(text);
  for (const [, spec] of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
    if (result) break;
    const target = resolve(dirname(file), spec!);
    if (target.startsWith(join(ROOT, "test")) && target !== HARNESS && existsSync(target)) result = spawns(target);
  }
  seen.set(file, result);
  return result;
}

const files = [...new Bun.Glob("test/**/*.test.ts").scanSync(ROOT)].map((f) => join(ROOT, f)).sort();
const quick = files.filter((f) => {
  const name = relative(ROOT, f);
  return !name.startsWith("test/regression/") && !SLOW.has(name) && !spawns(f);
});
for (const name of SLOW) if (!files.includes(join(ROOT, name))) console.error(`test:quick: ${name} (in SLOW) is gone; take it off the list`);
console.error(`test:quick: ${quick.length} of ${files.length} test files (no process started, no regression test, none in SLOW)`);
const child = Bun.spawn([process.execPath, "test", "--timeout", "30000", ...process.argv.slice(2), ...quick.map((f) => `./${relative(ROOT, f)}`)], {
  cwd: ROOT,
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await child.exited);
