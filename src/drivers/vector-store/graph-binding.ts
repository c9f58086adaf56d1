// The usearch package's version, and vecsync's own binding over the same headers
// (native/README.md), the one every HNSW graph of the managed store runs on: loaded from the
// repository under `bun run`, or from the embedded copy in the compiled binary. Without it the
// store does not open (VectorStore.open), and `vecsync version --check` says why.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embedded } from "../../native/embedded.ts";
import { loadAddon } from "../../native/load.ts";

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

/** Rows given to a graph: f32 vectors or i8 codes, n × dims, at byte offset 0 (usearch ignores view offsets). */
export type Vectors = Float32Array | Int8Array;

/**
 * One usearch dense index, metric cosine, scalar i8, through native/graph/graph.cpp (its calls
 * and its rules of concurrency: native/README.md).
 */
export interface Graph {
  size(): number;
  capacity(): number;
  /**
   * Adds rows whose keys are absent (present ones are skipped). While an `addAsync` runs, waits
   * for it. `linked`, given (keys.length bytes), is filled once every row is in: for each row
   * this call added, how many of its base-level neighbours link back to it (capped at 254; 0: no
   * search can reach it there, a stray), and 255 for a row already present.
   */
  add(keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array): void;
  /** The same, on a thread of its own; the arrays must not change until it settles. */
  addAsync(keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array): Promise<void>;
  /** n queries of k: query q's matches at [q·k, q·k + k); slots past its matches have distance +Infinity. */
  search(queries: Vectors, k: number, threads: number): [keys: BigUint64Array, distances: Float32Array, counts: Uint32Array];
  /**
   * The same off the JS thread, at its priority, or with `background` at the insertions' (nice
   * 10); `queries` must not change until it settles. A reserve waits for it (an add that grows the
   * graph blocks until it ends).
   */
  searchAsync(queries: Vectors, k: number, threads: number, background?: boolean): Promise<[keys: BigUint64Array, distances: Float32Array, counts: Uint32Array]>;
  /**
   * Starts one query's search on the graph's helper thread and returns at once, so the caller can
   * work meanwhile; `searchEnd` waits for it and answers as `search` does for one query. No other
   * call on this graph in between (a reserve would move what the search reads), and `query` must
   * not change.
   */
  searchBegin(query: Vectors, k: number): void;
  searchEnd(): [keys: BigUint64Array, distances: Float32Array, counts: Uint32Array];
  contains(keys: BigUint64Array): boolean[];
  /**
   * Copies each key's stored i8 vector to its row of `out` (keys.length × dims); keys of 2⁶⁴ − 1
   * are skipped. Answers how many other keys were absent (their rows zeroed).
   */
  gather(keys: BigUint64Array, out: Int8Array): number;
  save(path: string): void;
  /** Saves on a thread of its own (searches may run meanwhile); the count of vectors saved. */
  saveAsync(path: string): Promise<number>;
  load(path: string): void;
}

type GraphAddon = {
  Graph: new (dims: number, metric: "cos", scalar: "i8", connectivity: number, expansionAdd: number, expansionSearch: number, contexts: number) => Graph;
  usearchVersion: string;
};

/** An insertion, an async search and a search on the loop may run at once, each on contexts of its own. */
const CONTEXTS_PER_THREAD = 3;

/** A new, empty graph; `threads`: the most any one call will use. */
export function openGraph(dims: number, shape: { connectivity: number; expansionAdd: number; threads: number }, expansionSearch: number): Graph {
  const { Graph } = graphAddon();
  return new Graph(dims, "cos", "i8", shape.connectivity, shape.expansionAdd, expansionSearch, CONTEXTS_PER_THREAD * Math.max(1, shape.threads));
}

/** The prebuilt binding's place in the repository, for the platforms it is built for. */
const PREBUILT = join(import.meta.dir, "..", "..", "..", "native", "prebuilt", `${process.platform}-${process.arch}`, "vecsync-graph.node");

let loaded: { addon: GraphAddon; path: string } | { error: Error } | undefined;

/**
 * vecsync's usearch binding, loaded once per process. Throws, saying why and what to do, where it
 * cannot be used: not built for this platform, not loadable (e.g. musl, an older glibc), or built
 * from other usearch headers than the installed package's (the index files must stay usearch's).
 */
export function graphAddon(): GraphAddon {
  loaded ??= open(embedded ? null : PREBUILT);
  if ("error" in loaded) throw loaded.error;
  return loaded.addon;
}

/**
 * Loads the binding from `path` instead of the prebuilt copy: a build checked before it is
 * committed (scripts/native/check-graph.sh, through graph.test.ts). Before any graph is made.
 */
export function useGraphAddonFrom(path: string): void {
  if (loaded && "addon" in loaded && loaded.path !== path) throw new Error(`the graph binding is loaded from ${loaded.path} already`);
  const next = open(path);
  if ("error" in next) throw next.error;
  loaded = next;
}

/** Where the binding in use was loaded from ("embedded" in a compiled binary). */
export function graphAddonPath(): string {
  graphAddon();
  return loaded && "path" in loaded ? loaded.path : "";
}

function open(path: string | null): { addon: GraphAddon; path: string } | { error: Error } {
  const failed = (why: string) => ({ error: new Error(`the usearch graph binding (native/graph) cannot be used: ${why}; see native/README.md`) });
  try {
    let addon: GraphAddon;
    if (!path) {
      if (!embedded?.engines.graph) return failed(`this executable does not embed it`);
      addon = loadAddon("graph") as GraphAddon;
    } else {
      if (!existsSync(path)) return failed(`${path} is missing: it is prebuilt for linux-x64 only; elsewhere build it with \`bash scripts/native/build-graph.sh\``);
      const module = { exports: {} as GraphAddon };
      process.dlopen(module, path);
      addon = module.exports;
    }
    const installed = usearchVersion();
    if (addon.usearchVersion !== installed) return failed(`built from usearch ${addon.usearchVersion}, installed ${installed}: rebuild it with \`bash scripts/native/build-graph.sh\``);
    return { addon, path: path ?? "embedded" };
  } catch (err) {
    return failed(`${path ?? "the embedded copy"} does not load: ${(err as Error).message}`);
  }
}
