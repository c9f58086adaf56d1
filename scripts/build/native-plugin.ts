// The Bun plugin that makes the native packages work inside one executable.
//
// Each package finds its addon with a dynamic `require` Bun cannot follow (libsql builds the
// package name from the platform, usearch goes through node-gyp-build, DuckDB's binding needs
// libduckdb.so beside it). The plugin
//   1. replaces src/native/embedded.ts with the list of this target's native files, each imported
//      `with { type: "file" }` so they are embedded in the binary, and
//   2. rewrites each package's loading site to call src/native/load.ts, which writes the files
//      out to a cache directory on first use and loads them from there.
// Every rewrite must find the exact code it replaces: a package upgrade that moves it fails the
// build instead of shipping a binary that breaks on start.
import type { BunPlugin } from "bun";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { NativeEngine } from "../../src/native/embedded.ts";
import { packageDir, packageVersion, type BuildTarget } from "./targets.ts";

export type ResolvedEngine = { version: string; hash: string; files: { name: string; source: string; sizeBytes: number }[] };
export type ResolvedNatives = Record<NativeEngine, ResolvedEngine>;

/** Finds this target's native files in node_modules and fingerprints them. */
export function resolveNatives(target: BuildTarget, root: string): ResolvedNatives {
  const resolved = {} as ResolvedNatives;
  for (const [engine, spec] of Object.entries(target.natives) as [NativeEngine, BuildTarget["natives"][NativeEngine]][]) {
    const from = spec.via ? packageDir(spec.via, root) : root;
    const pkgDir = packageDir(spec.pkg, from);
    const dir = spec.dir ? join(root, spec.dir) : join(pkgDir, spec.subdir ?? "");
    const hash = createHash("sha256");
    const files = spec.files.map((name) => {
      const source = join(dir, name);
      hash.update(`${name}\0`).update(readFileSync(source));
      return { name, source, sizeBytes: statSync(source).size };
    });
    resolved[engine] = { version: packageVersion(pkgDir), hash: hash.digest("hex").slice(0, 16), files };
  }
  return resolved;
}

/** Source of the module that replaces src/native/embedded.ts in the binary. */
function embeddedModule(targetKey: string, natives: ResolvedNatives): string {
  const imports: string[] = [];
  const engines = Object.entries(natives).map(([engine, e]) => {
    const files = e.files.map((f) => {
      const binding = `file_${imports.length}`;
      imports.push(`import ${binding} from ${JSON.stringify(f.source)} with { type: "file" };`);
      return `{ name: ${JSON.stringify(f.name)}, path: ${binding}, sizeBytes: ${f.sizeBytes} }`;
    });
    const main = JSON.stringify(e.files[0]!.name);
    return `${JSON.stringify(engine)}: { version: ${JSON.stringify(e.version)}, hash: ${JSON.stringify(e.hash)}, main: ${main}, files: [${files.join(", ")}] }`;
  });
  return `${imports.join("\n")}\nexport const embedded = { target: ${JSON.stringify(targetKey)}, engines: { ${engines.join(", ")} } };\n`;
}

function assertContains(source: string, find: string | RegExp, where: string): void {
  const found = typeof find === "string" ? source.includes(find) : find.test(source);
  if (!found) throw new Error(`native-plugin: ${where} no longer contains ${String(find)}; update scripts/build/native-plugin.ts`);
}

function replaceOnce(source: string, find: string | RegExp, replacement: string, where: string): string {
  assertContains(source, find, where);
  return source.replace(find, () => replacement);
}

type Rewrite = { engine: NativeEngine; file: RegExp; apply: (source: string, load: string) => string };

const REWRITES: Rewrite[] = [
  {
    engine: "libsql",
    file: /[\\/]node_modules[\\/]libsql[\\/](index|promise)\.js$/,
    apply: (src, load) => replaceOnce(src, "require(`@libsql/${target}`)", `require(${load}).loadAddon("libsql")`, "libsql"),
  },
  {
    engine: "usearch",
    file: /[\\/]node_modules[\\/]usearch[\\/]javascript[\\/]dist[\\/]esm[\\/]usearch\.js$/,
    apply: (src, load) =>
      `import { loadAddon as __vecsyncLoadAddon } from ${load};\n` +
      replaceOnce(src, "const compiled = build(getBuildDir(getDirName()));", `const compiled = __vecsyncLoadAddon("usearch");`, "usearch (esm)"),
  },
  {
    engine: "usearch",
    file: /[\\/]node_modules[\\/]usearch[\\/]javascript[\\/]dist[\\/]cjs[\\/]usearch\.js$/,
    apply: (src, load) =>
      replaceOnce(src, "const compiled = (0, node_gyp_build_1.default)(getBuildDir(getDirName()));", `const compiled = require(${load}).loadAddon("usearch");`, "usearch (cjs)"),
  },
  {
    // The whole module is its platform switch; its requires of other platforms' packages would not
    // even resolve, so the module becomes the one line it exports.
    engine: "duckdb",
    file: /[\\/]node_modules[\\/]@duckdb[\\/]node-bindings[\\/]duckdb\.js$/,
    apply: (src, load) => {
      assertContains(src, "module.exports = getNativeNodeBinding(getRuntimePlatformArch());", "@duckdb/node-bindings");
      return `module.exports = require(${load}).loadAddon("duckdb");\n`;
    },
  },
];

/**
 * The plugin, and the set of engines whose loading site it rewrote: the build checks that every
 * embedded engine was actually reached.
 */
export function nativePlugin(opts: { root: string; targetKey: string; natives: ResolvedNatives }) {
  const applied = new Set<NativeEngine | "manifest">();
  const load = JSON.stringify(join(opts.root, "src/native/load.ts"));
  const embeddedPath = join(opts.root, "src/native/embedded.ts");
  const plugin: BunPlugin = {
    name: "vecsync-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]native[\\/]embedded\.ts$/ }, (args) => {
        if (args.path !== embeddedPath) throw new Error(`native-plugin: unexpected ${args.path}`);
        applied.add("manifest");
        return { contents: embeddedModule(opts.targetKey, opts.natives), loader: "js" };
      });
      // Our own binding needs no rewrite: the store's graph-binding.ts loads it from the manifest.
      // Seeing that call in the bundle is what proves the engine is reached.
      build.onLoad({ filter: /[\\/]src[\\/]drivers[\\/]vector-store[\\/]graph-binding\.ts$/ }, (args) => {
        const source = readFileSync(args.path, "utf8");
        assertContains(source, 'loadAddon("graph")', "src/drivers/vector-store/graph-binding.ts");
        applied.add("graph");
        return { contents: source, loader: "ts" };
      });
      for (const rewrite of REWRITES) {
        build.onLoad({ filter: rewrite.file }, (args) => {
          applied.add(rewrite.engine);
          return { contents: rewrite.apply(readFileSync(args.path, "utf8"), load), loader: "js" };
        });
      }
    },
  };
  return { plugin, applied };
}
