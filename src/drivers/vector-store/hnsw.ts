// A usearch HNSW index keyed by rid, metric cosine. Its JS binding has no filter callback and
// cannot change expansion_search on a live index, so filtering is done by oversampling in
// search.ts; usearch searches with ef = max(expansion_search, results asked for), so asking for
// more results is how a search is widened (planner.ts searchBreadth).
import { Index, MetricKind, ScalarKind } from "usearch";
import type { IndexParams, ScalarKindName } from "./types.ts";

const SCALARS: Record<ScalarKindName, ScalarKind> = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 };

/** Bytes per scalar in the index, for memory accounting. */
const SCALAR_BYTES: Record<ScalarKindName, number> = { f32: 4, f16: 2, i8: 1 };

export class HnswIndex {
  readonly index: Index;

  constructor(
    readonly dims: number,
    readonly params: IndexParams,
  ) {
    this.index = new Index({
      dimensions: dims,
      metric: MetricKind.Cos,
      quantization: SCALARS[params.scalar],
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: params.expansionSearch,
      multi: false,
    });
  }

  get size(): number {
    return this.index.size();
  }

  /** Adds or replaces rows. `vectors` must own its buffer (offset 0): n × dims floats. */
  upsert(rids: ArrayLike<number>, vectors: Float32Array): void {
    if (rids.length === 0) return;
    const keys = BigUint64Array.from(Array.from(rids, (r) => BigInt(r)));
    const present = this.index.contains(keys) as boolean[] | boolean;
    const existing = Array.isArray(present) ? keys.filter((_, i) => present[i]) : present ? keys : new BigUint64Array(0);
    if (existing.length > 0) this.index.remove(existing);
    this.index.add(keys, vectors, this.params.threads);
  }

  remove(rids: ArrayLike<number>): void {
    if (rids.length === 0) return;
    this.index.remove(BigUint64Array.from(Array.from(rids, (r) => BigInt(r))));
  }

  contains(rid: number): boolean {
    return this.index.contains(BigInt(rid)) as boolean;
  }

  /** Approximate top-k rids (nearest first). `query` must own its buffer. One thread. */
  search(query: Float32Array, k: number): { rids: number[]; distances: Float32Array } {
    const found = this.index.search(query, Math.max(1, Math.min(k, this.size || 1)), 1);
    const n = found.keys.length;
    const rids: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = found.distances[i]!;
      // usearch pads missing results; a real match always has a finite distance
      if (Number.isFinite(d) && d < 3.0e38) rids.push(Number(found.keys[i]!));
    }
    return { rids, distances: found.distances.subarray(0, rids.length) };
  }

  save(path: string): void {
    this.index.save(path);
  }

  load(path: string): void {
    this.index.load(path);
  }

  /** An estimate: vectors at the index's scalar width plus the level-0 graph (2M links of 4 B). */
  memoryBytes(): number {
    const perVector = this.dims * SCALAR_BYTES[this.params.scalar] + this.params.connectivity * 2 * 4 + 16;
    return this.index.capacity() * perVector;
  }
}
