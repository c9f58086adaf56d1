// What the native packages call instead of their own dynamic `require`s inside a compiled binary:
// scripts/build/native-plugin.ts rewrites libsql, usearch and @duckdb/node-bindings to call these.
// Under `bun run` nothing calls them; the packages load from node_modules.
// Keep this module a leaf (no package imports): the rewritten packages import it while they load.
import { join } from "node:path";
import { embedded, type NativeEngine } from "./embedded.ts";
import { extractEngine } from "./extract.ts";

const directories = new Map<NativeEngine, string>();
const addons = new Map<NativeEngine, unknown>();

function embeddedEngine(name: NativeEngine) {
  const engine = embedded?.engines[name];
  if (!engine) throw new Error(`the ${name} native files are not embedded in this executable`);
  return engine;
}

/** Path of the engine's main native file on the real filesystem (extracted on first use). */
function nativeFile(name: NativeEngine): string {
  const engine = embeddedEngine(name);
  let dir = directories.get(name);
  if (!dir) {
    dir = extractEngine(name, engine);
    directories.set(name, dir);
  }
  return join(dir, engine.main);
}

/** Loads the engine's N-API addon, once, as the package's own `require` of it would have. */
export function loadAddon(name: NativeEngine): unknown {
  if (!addons.has(name)) {
    const module = { exports: {} as unknown };
    process.dlopen(module, nativeFile(name));
    addons.set(name, module.exports);
  }
  return addons.get(name);
}
