// `npm run test:quick`: the inner loop's tier — every test file that starts no process (no
// service, CLI, fixture, sqld or mount), on the tests' own PostgreSQL like `npm test`. A file
// is left out when it, or a helper under test/ that it imports, spawns one; test/harness.ts is
// read by the functions a file calls from it, since it holds both kinds. Extra arguments go to
// `bun test`. `npm test` still runs everything.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");
const HARNESS = join(ROOT, "test/harness.ts");
const SPAWNS = /Bun\.spawn|spawnSync|child_process|\bstartProcess\(|\brunCli\(|\bmountSmallDisk\(|\bprobeInChild\(|\bsqld\b/;

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
const quick = files.filter((f) => !spawns(f));
console.error(`test:quick: ${quick.length} of ${files.length} test files (those that start no process)`);
const child = Bun.spawn([process.execPath, "test", "--timeout", "30000", ...process.argv.slice(2), ...quick.map((f) => `./${relative(ROOT, f)}`)], {
  cwd: ROOT,
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await child.exited);
