// Which native files each build target embeds, and where npm put them.
//
// Handled today: linux-x64-gnu (the platform we run and test on). npm installs only the current
// platform's optional packages, so another target is added by (1) an entry below naming its
// platform packages and (2) building on that platform (or after installing those packages with
// `npm install --force --os=… --cpu=…`). The rewrites in native-plugin.ts are platform-neutral.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { NativeEngine } from "../../src/native/embedded.ts";

export type NativeSource = {
  /** npm package holding the files, or (with `dir`) the package whose version names them. */
  pkg: string;
  /** Folder of this repository holding the files instead of the package (our own prebuilt addon). */
  dir?: string;
  /** Package through which our code reaches `pkg` (npm may nest `pkg` under it). */
  via?: string;
  /** Folder inside the package. */
  subdir?: string;
  /** Every file that must sit in one directory on disk; the first is the one loaded. */
  files: string[];
};

export type BuildTarget = {
  /** Passed to `Bun.build({ compile: { target } })`. */
  bunTarget: Bun.Build.CompileTarget;
  natives: Record<NativeEngine, NativeSource>;
};

export const TARGETS: Record<string, BuildTarget> = {
  "linux-x64-gnu": {
    bunTarget: "bun-linux-x64",
    natives: {
      libsql: { pkg: "@libsql/linux-x64-gnu", via: "libsql", files: ["index.node"] },
      usearch: { pkg: "usearch", subdir: "prebuilds/linux-x64", files: ["usearch.node"] },
      // vecsync's binding over the same usearch headers (native/README.md): named by usearch's version.
      graph: { pkg: "usearch", dir: "native/prebuilt/linux-x64", files: ["vecsync-graph.node"] },
      // duckdb.node links libduckdb.so through RUNPATH $ORIGIN: both go to the same directory.
      duckdb: { pkg: "@duckdb/node-bindings-linux-x64", via: "@duckdb/node-bindings", files: ["duckdb.node", "libduckdb.so"] },
    },
  },
};

/** The target key of the machine running the build, e.g. `linux-x64-gnu`. */
export function hostTarget(): string {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== "linux") return base;
  // Node's (and Bun's) diagnostic report names the glibc version; on musl it has none.
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return `${base}-${report?.header?.glibcVersionRuntime ? "gnu" : "musl"}`;
}

/** Node's lookup: the nearest `node_modules/<pkg>` at or above `from`. */
export function packageDir(pkg: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", pkg);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) throw new Error(`package ${pkg} is not installed (looked upward from ${from})`);
  }
}

export function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}
