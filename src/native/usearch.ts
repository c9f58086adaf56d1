// The usearch package's version, and vecsync's own binding over the same headers
// (native/README.md): loaded from the repository under `bun run`, from the embedded copy in the
// compiled binary, or not at all (the stock binding serves then).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embedded } from "./embedded.ts";
import { loadAddon } from "./load.ts";

/** The usearch package's version (its addon has no query for it through the JS wrapper). */
export function usearchVersion(): string {
  return embedded?.engines.usearch.version ?? installedVersion("usearch");
}

function installedVersion(pkg: string): string {
  let dir = dirname(Bun.resolveSync(pkg, import.meta.dir));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === pkg && parsed.version) return parsed.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json found for ${pkg}`);
    dir = dirname(dir);
  }
}

/** What native/graph/graph.cpp exports (see src/drivers/vector-store/graph.ts). */
export type GraphAddon = { Graph: new (...args: unknown[]) => unknown; usearchVersion: string };

/** The prebuilt binding's place in the repository, for the platforms it is built for. */
const GRAPH_ADDON = join(import.meta.dir, "..", "..", "native", "prebuilt", `${process.platform}-${process.arch}`, "vecsync-graph.node");

let graphAddon: { addon: GraphAddon | null; why: string } | undefined;
let graphChoice: "auto" | "stock" = "auto";

/** Process-wide, like the engines themselves: `stock` (VECSYNC_GRAPH, set by the composition root) turns ours off. */
export function chooseGraphBinding(choice: "auto" | "stock"): void {
  graphChoice = choice;
}

/**
 * vecsync's own usearch binding (native/README.md), or null with the reason when it cannot be
 * used here: turned off (VECSYNC_GRAPH=stock), not built for this platform, not loadable (e.g.
 * musl), or built from other usearch headers than the installed package's (files must stay
 * readable by both). Callers then use the stock binding.
 */
export function loadGraphAddon(): { addon: GraphAddon | null; why: string } {
  if (graphChoice === "stock") return { addon: null, why: "VECSYNC_GRAPH=stock" };
  graphAddon ??= openGraphAddon();
  return graphAddon;
}

function openGraphAddon(): { addon: GraphAddon | null; why: string } {
  try {
    let addon: GraphAddon;
    if (embedded) {
      if (!embedded.engines.graph) return { addon: null, why: "not embedded for this target" };
      addon = loadAddon("graph") as GraphAddon;
    } else {
      if (!existsSync(GRAPH_ADDON)) return { addon: null, why: `not built for ${process.platform}-${process.arch}` };
      const module = { exports: {} as GraphAddon };
      process.dlopen(module, GRAPH_ADDON);
      addon = module.exports;
    }
    const stock = usearchVersion();
    if (addon.usearchVersion !== stock) return { addon: null, why: `built from usearch ${addon.usearchVersion}, installed ${stock}` };
    return { addon, why: "" };
  } catch (err) {
    return { addon: null, why: (err as Error).message };
  }
}
