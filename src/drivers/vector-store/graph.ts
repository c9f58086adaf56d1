// The HNSW graph behind HnswIndex (hnsw.ts): usearch's dense index, through one of two bindings
// with one contract (test/drivers/vector-store/graph.test.ts runs it on both).
//
// - `vecsync`: our own binding (native/graph/graph.cpp, prebuilt for linux-x64). Its `addAsync`
//   inserts on a thread of its own, so a backfill's insertions no longer hold the event loop and
//   searches run beside them (docs/architecture.md, "The graph off the event loop").
// - `stock`: the usearch package's binding, used where ours cannot load (src/native/usearch.ts
//   loadGraphAddon says why). It adds synchronously: `addAsync` is null and callers add in short
//   steps instead.
//
// Both read and write the same files: ours is built from the installed package's headers, and
// refuses to load when the versions differ.
import { Index, MetricKind, ScalarKind } from "usearch";
import { loadGraphAddon } from "../../native/usearch.ts";
import type { IndexParams, ScalarKindName } from "./types.ts";

export type Vectors = Float32Array | Int8Array;

/** Results of n queries of k: row q's matches at [q·k, q·k + k); slots past its matches have distance +Infinity. */
export type Found = { keys: BigUint64Array; distances: Float32Array };

export interface Graph {
  readonly binding: "vecsync" | "stock";
  size(): number;
  capacity(): number;
  /**
   * Adds rows whose keys are absent (present ones are skipped). While an `addAsync` runs, waits
   * for it. `linked` is filled as `addAsync`'s where the binding counts back links (`countsLinks`).
   */
  add(keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array): void;
  /** Whether `add` and `addAsync` fill `linked` (back-links.ts). */
  readonly countsLinks: boolean;
  /**
   * The same, on a thread of its own; the arrays must not change until it settles. Null: not
   * offered. `linked`, given (keys.length bytes), is filled once every row is in: for each row
   * this call added, how many of its base-level neighbours link back to it (capped at 254; 0: no
   * search can reach it there, a stray), and 255 for a row already present.
   */
  readonly addAsync: ((keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array) => Promise<void>) | null;
  search(queries: Vectors, k: number, threads: number): Found;
  contains(keys: BigUint64Array): boolean[];
  /**
   * Copies each key's stored i8 vector to its row of `out` (keys.length × dims); keys of 2⁶⁴ − 1
   * are skipped. Answers how many other keys were absent (their rows zeroed). Null: not offered
   * (the stock binding, or an index not of i8), so a mirror keeps its own codes (lent-codes.ts).
   */
  readonly gather: ((keys: BigUint64Array, out: Int8Array) => number) | null;
  save(path: string): void;
  /** Saves on a thread of its own where the binding can (searches may run meanwhile); the count of vectors saved. */
  saveAsync(path: string): Promise<number>;
  load(path: string): void;
}

/** Rows `indices` of an n × dims matrix, in a new buffer of the same type (usearch ignores view offsets). */
export function rowsOf<T extends Vectors>(vectors: T, indices: number[], dims: number): T {
  const out = (vectors instanceof Int8Array ? new Int8Array(indices.length * dims) : new Float32Array(indices.length * dims)) as T;
  indices.forEach((from, to) => out.set(vectors.subarray(from * dims, (from + 1) * dims), to * dims));
  return out;
}

/** Search threads and add threads each get their own thread contexts in the vecsync binding. */
const CONTEXTS_PER_THREAD = 2;

export type Binding = Graph["binding"];

/** The graph for `params`, on our binding where it loads, else on the stock one; `binding` insists on one (tests). */
export function openGraph(dims: number, params: IndexParams, expansionSearch: number, binding?: Binding): Graph {
  if (binding === "stock") return new StockGraph(dims, params, expansionSearch);
  const { addon, why } = loadGraphAddon();
  if (addon) return new VecsyncGraph(addon.Graph, dims, params, expansionSearch);
  if (binding === "vecsync") throw new Error(`the vecsync graph binding is not available: ${why}`);
  return new StockGraph(dims, params, expansionSearch);
}

type NativeGraph = {
  size(): number;
  capacity(): number;
  add(keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array): void;
  addAsync(keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array): Promise<void>;
  search(queries: Vectors, k: number, threads: number): [BigUint64Array, Float32Array, Uint32Array];
  contains(keys: BigUint64Array): boolean[];
  gather(keys: BigUint64Array, out: Int8Array): number;
  save(path: string): void;
  saveAsync(path: string): Promise<number>;
  load(path: string): void;
};

class VecsyncGraph implements Graph {
  readonly binding = "vecsync";
  readonly countsLinks = true;
  private readonly native: NativeGraph;
  readonly addAsync: Graph["addAsync"];
  readonly gather: Graph["gather"];

  constructor(Native: new (...args: unknown[]) => unknown, dims: number, params: IndexParams, expansionSearch: number) {
    this.native = new Native(dims, "cos", params.scalar, params.connectivity, params.expansionAdd, expansionSearch, CONTEXTS_PER_THREAD * Math.max(1, params.threads)) as NativeGraph;
    this.addAsync = (keys, vectors, threads, linked) => this.native.addAsync(keys, vectors, threads, linked);
    this.gather = params.scalar === "i8" ? (keys, out) => this.native.gather(keys, out) : null;
  }

  size = () => this.native.size();
  capacity = () => this.native.capacity();
  add = (keys: BigUint64Array, vectors: Vectors, threads: number, linked?: Uint8Array) => this.native.add(keys, vectors, threads, linked);
  contains = (keys: BigUint64Array) => this.native.contains(keys);
  save = (path: string) => this.native.save(path);
  saveAsync = (path: string) => this.native.saveAsync(path);
  load = (path: string) => this.native.load(path);

  search(queries: Vectors, k: number, threads: number): Found {
    const [keys, distances] = this.native.search(queries, k, threads);
    return { keys, distances };
  }
}

const SCALARS: Record<ScalarKindName, ScalarKind> = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 };

class StockGraph implements Graph {
  readonly binding = "stock";
  /** The package's binding exposes no neighbour lists: every added row is searched for. */
  readonly countsLinks = false;
  readonly addAsync = null;
  /** The package's binding reads a vector back only as f32, one key a call: too slow to serve a mirror's scans. */
  readonly gather = null;
  private readonly index: Index;

  constructor(
    private readonly dims: number,
    params: IndexParams,
    expansionSearch: number,
  ) {
    this.index = new Index({
      dimensions: dims,
      metric: MetricKind.Cos,
      quantization: SCALARS[params.scalar],
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: expansionSearch,
      multi: false,
    });
  }

  size = () => this.index.size();
  capacity = () => this.index.capacity();
  save = (path: string) => this.index.save(path);
  load = (path: string) => this.index.load(path);

  async saveAsync(path: string): Promise<number> {
    this.index.save(path);
    return this.index.size();
  }

  add(keys: BigUint64Array, vectors: Vectors, threads: number): void {
    const present = this.contains(keys);
    if (!present.some(Boolean)) return this.index.add(keys, vectors, threads);
    const keep = present.flatMap((p, i) => (p ? [] : [i]));
    if (keep.length === 0) return;
    this.index.add(BigUint64Array.from(keep, (i) => keys[i]!), rowsOf(vectors, keep, this.dims), threads);
  }

  contains(keys: BigUint64Array): boolean[] {
    if (keys.length === 0) return [];
    const found = this.index.contains(keys) as boolean[] | boolean;
    return Array.isArray(found) ? found : [found];
  }

  search(queries: Vectors, k: number, threads: number): Found {
    const n = queries.length / this.dims;
    const found = this.index.search(queries, k, threads);
    if (n === 1) {
      // One query comes back cut to its matches: pad it like a batch.
      const distances = new Float32Array(k).fill(Infinity);
      distances.set(found.distances);
      const keys = new BigUint64Array(k);
      keys.set(found.keys);
      return { keys, distances };
    }
    // A batch comes back k a query, zero past each query's count.
    const { keys, distances, counts } = found as unknown as { keys: BigUint64Array; distances: Float32Array; counts: BigUint64Array };
    for (let q = 0; q < n; q++) distances.fill(Infinity, q * k + Number(counts[q]), (q + 1) * k);
    return { keys, distances };
  }
}
