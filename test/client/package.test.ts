// @vecsync/client as a consumer gets it: the package is built and packed, the tarball installed in a
// scratch project (with this repository's TypeScript, linked, so no download), and plain `tsc`
// run there on consumer/ok.ts — under the DOM lib, and under Node's types — and on consumer/bad.ts,
// whose every `// error:` comment must match an error on its line. (The consumer files are
// excluded from the repository's own typecheck: they import the package by name.)
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../harness.ts";

// Builds, packs and installs, then type-checks: slow on a loaded 2-core machine.
setDefaultTimeout(90_000);

const PACKAGE = join(ROOT, "packages/client");
const CONSUMER = join(import.meta.dir, "consumer");
const MODULES = realpathSync(join(ROOT, "node_modules"));

type Run = { code: number; out: string; err: string };

async function run(cmd: string[], cwd: string): Promise<Run> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

/** stdout of a command that must succeed. */
async function ok(cmd: string[], cwd: string): Promise<string> {
  const result = await run(cmd, cwd);
  if (result.code !== 0) throw new Error(`${cmd.join(" ")} exited ${result.code}:\n${result.out}${result.err}`);
  return result.out;
}

const options = {
  strict: true,
  noEmit: true,
  target: "ES2022",
};
const TSCONFIGS = {
  // A browser app: the DOM lib, a bundler's resolution, every declaration checked.
  dom: { ...options, module: "ESNext", moduleResolution: "Bundler", lib: ["ESNext", "DOM"], types: [], skipLibCheck: false },
  // A Node app: no DOM, Node's types. skipLibCheck as `tsc --init` sets it: @trpc/client's own
  // declarations name the DOM's RequestInfo, which Node's types do not declare.
  node: { ...options, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], typeRoots: [join(MODULES, "@types")], skipLibCheck: true },
};

const scratch = tempDir("vecsync-client-");
let tarball: string;
let checks: Record<"dom" | "node", Promise<Run>>;

beforeAll(async () => {
  await ok(["npm", "run", "build"], PACKAGE);
  const packed = JSON.parse(await ok(["npm", "pack", "--json", "--ignore-scripts", "--pack-destination", scratch.path], PACKAGE)) as { filename: string }[];
  tarball = packed[0]!.filename;
  const manifest = {
    name: "scratch",
    version: "1.0.0",
    private: true,
    type: "module",
    dependencies: { "@vecsync/client": `file:./${tarball}` },
    devDependencies: { typescript: `file:${join(MODULES, "typescript")}` },
  };
  writeFileSync(join(scratch.path, "package.json"), JSON.stringify(manifest, null, 2));
  for (const file of ["ok.ts", "bad.ts"]) copyFileSync(join(CONSUMER, file), join(scratch.path, file));
  await ok(["npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], scratch.path);
  const tsc = (name: keyof typeof TSCONFIGS, files: string[]) => {
    writeFileSync(join(scratch.path, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: TSCONFIGS[name], files }));
    return run(["node", join(scratch.path, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${name}.json`], scratch.path);
  };
  // Both at once; ok.ts and bad.ts share the DOM run (errors are told apart by file).
  checks = { dom: tsc("dom", ["ok.ts", "bad.ts"]), node: tsc("node", ["ok.ts"]) };
  await Promise.all(Object.values(checks));
});

afterAll(() => scratch[Symbol.dispose]());

type TscError = { file: string; line: number; code: string; message: string };

/** `file(line,col): error TSxxxx: message` lines, continuation lines folded into the message. */
function tscErrors(out: string): TscError[] {
  const errors: TscError[] = [];
  for (const line of out.split("\n")) {
    const m = line.match(/^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/);
    if (m) errors.push({ file: m[1]!, line: Number(m[2]), code: m[3]!, message: m[4]! });
    else if (errors.length > 0 && line.trim()) errors.at(-1)!.message += ` ${line.trim()}`;
  }
  return errors;
}

describe("the packed package", () => {
  test("holds the built declarations and code, its manifest and README, nothing else", async () => {
    const files = (await ok(["tar", "tzf", tarball], scratch.path)).trim().split("\n").sort();
    expect(files).toEqual(
      ["README.md", "dist/filters.d.ts", "dist/filters.js", "dist/index.d.ts", "dist/index.js", "dist/router.d.ts", "dist/router.js", "package.json"].map((f) => `package/${f}`),
    );
    const manifest = JSON.parse(readFileSync(join(scratch.path, "node_modules/@vecsync/client/package.json"), "utf8"));
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
  });

  test("its declarations stand alone: no server source, no Bun or Node type", () => {
    const declarations = ["index", "router", "filters"]
      .map((f) => readFileSync(join(scratch.path, `node_modules/@vecsync/client/dist/${f}.d.ts`), "utf8"))
      .join("\n")
      .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ""); // the code, not its comments
    const imports = [...declarations.matchAll(/from "([^"]+)"/g)].map((m) => m[1]).sort();
    expect([...new Set(imports)]).toEqual(["./filters.js", "./router.js", "@trpc/client", "@trpc/server"]);
    expect(declarations).not.toMatch(/\b(Bun|Buffer|NodeJS|Request|Response)\b/);
  });
});

describe("a consumer", () => {
  test("compiles under the DOM lib", async () => {
    const errors = tscErrors((await checks.dom).out).filter((e) => e.file !== "bad.ts");
    expect(errors).toEqual([]);
  });

  test("compiles under Node's types", async () => {
    const { code, out } = await checks.node;
    expect(tscErrors(out)).toEqual([]);
    expect(code).toBe(0);
  });

  test("does not compile a wrong operator, a wrong value kind or a wrong result type, each with its error", async () => {
    const expected = readFileSync(join(CONSUMER, "bad.ts"), "utf8")
      .split("\n")
      .flatMap((text, i) => {
        const m = text.match(/\/\/ error: (TS\d+) (.+)$/);
        return m ? [{ line: i + 1, code: m[1]!, phrase: m[2]! }] : [];
      });
    expect(expected.length).toBeGreaterThan(5);
    const errors = tscErrors((await checks.dom).out).filter((e) => e.file === "bad.ts");
    const found = expected.map((e) => ({ ...e, found: errors.some((x) => x.line === e.line && x.code === e.code && x.message.includes(e.phrase)) }));
    expect(found.filter((f) => !f.found)).toEqual([]);
    const stray = errors.filter((x) => !expected.some((e) => e.line === x.line));
    expect(stray).toEqual([]);
  });
});
