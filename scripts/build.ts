// `bun run build`: compiles src/main.ts into one executable, dist/vecsync, that runs from any
// directory without node_modules. The native engines (libSQL, DuckDB, usearch and our own binding
// over it) ride inside it and are written out to a cache directory on first use; see
// scripts/build/. The local semantic model's worker and the database's write thread are entry
// points too (Bun finds a worker in a binary only among its entry points); the model's weights and
// WASM kernels are embedded files read in place (src/drivers/embeddings/local-semantic/assets.ts).
//
//   bun run scripts/build.ts [--outfile dist/vecsync] [--target linux-x64-gnu]
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { nativePlugin, resolveNatives } from "./build/native-plugin.ts";
import { hostTarget, TARGETS } from "./build/targets.ts";
import { WORKER_ENTRY } from "../src/drivers/embeddings/local-semantic/protocol.ts";
import { WRITE_WORKER_ENTRY } from "../src/db/write-protocol.ts";

const ROOT = resolve(import.meta.dir, "..");

const { values } = parseArgs({
  options: {
    outfile: { type: "string", default: join(ROOT, "dist/vecsync") },
    target: { type: "string", default: hostTarget() },
  },
});
const targetKey = values.target;
const outfile = resolve(values.outfile);
const target = TARGETS[targetKey];
if (!target) {
  console.error(`build: target ${targetKey} is not handled (handled: ${Object.keys(TARGETS).join(", ")})`);
  process.exit(2);
}

const started = performance.now();
const natives = resolveNatives(target, ROOT);
const { plugin, applied } = nativePlugin({ root: ROOT, targetKey, natives });
mkdirSync(dirname(outfile), { recursive: true });
// Workers are looked up by their paths relative to the entry points' common root, src/ (protocol.ts, write-protocol.ts).
const worker = join(ROOT, "src", WORKER_ENTRY);
const writeWorker = join(ROOT, "src", WRITE_WORKER_ENTRY);
for (const [file, constant] of [[worker, "WORKER_ENTRY in local-semantic/protocol.ts"], [writeWorker, "WRITE_WORKER_ENTRY in db/write-protocol.ts"]] as const) {
  if (!existsSync(file)) {
    console.error(`build: the worker ${file} is missing; update ${constant}`);
    process.exit(1);
  }
}
const result = await Bun.build({
  entrypoints: [join(ROOT, "src/main.ts"), worker, writeWorker],
  compile: {
    outfile,
    // Cross-compiling downloads the target's Bun runtime; for the host Bun uses itself.
    ...(targetKey === hostTarget() ? {} : { target: target.bunTarget }),
    // A deployed binary takes its settings from flags and the environment (docs/running.md#configuration), not
    // from whatever bunfig.toml happens to be in its working directory.
    autoloadBunfig: false,
  },
  // Bytecode saves parsing at every start (measured ~10-15% faster to `listening`); it needs the
  // format spelled out. The source map is embedded (zstd) so stack traces point at src/.
  bytecode: true,
  format: "esm",
  minify: { whitespace: true, syntax: true },
  sourcemap: "linked",
  plugins: [plugin],
  throw: false,
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}

// A package nobody imports is not rewritten, and its addon would be missing at run time: every
// embedded engine must have been reached through the plugin.
const missing = [...Object.keys(natives), "manifest"].filter((e) => !applied.has(e as never));
if (missing.length) {
  console.error(`build: native loading was not rewritten for: ${missing.join(", ")}`);
  process.exit(1);
}

// "linked" also writes <outfile>.map beside the binary; the embedded copy is the one used.
rmSync(`${outfile}.map`, { force: true });

const sizeMiB = statSync(outfile).size / 2 ** 20;
const seconds = (performance.now() - started) / 1000;
console.log(`built ${outfile} (${targetKey}, ${sizeMiB.toFixed(1)} MiB) in ${seconds.toFixed(1)} s`);
