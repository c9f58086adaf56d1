// Searching rows by their own vector: does the graph reach each one? The test that makes a row a
// stray (strays.ts). The searches run off the event loop (HnswIndex.searchOffLoop): under a change
// stream of 2,000 rows/s they were a sixth of the loop's time, spent while queries and the
// stream's own writes waited.
import { type HnswIndex, type IsCurrent, keyWords, VERSION_SPAN } from "./hnsw.ts";
import { searchBreadth } from "./planner.ts";

/** Which of a self-check's passes to run: all, or one (0: the first, ef ≈ k; checkDepths). */
export type Passes = "all" | number;

/**
 * `passes`: as Passes says (default all). `background`: the rows are stray-listed, so found,
 * until decided: the searches yield the CPU to the loop (the binding's insertion priority).
 * Otherwise (a sweep, a load's check) they run at the loop's priority: rows a later insert cut
 * off are findable only once the sweep lists them.
 */
export type CheckOptions = { passes?: Passes; background?: boolean };

/**
 * The depths (results asked for, so ef) of a self-check's passes, growing: `asked` (≈ k), then
 * `expansionSearch`, then the breadth unfiltered searches of `liveRows` rows run at (planner.ts
 * searchBreadth), none past the index's size. The last is the depth that decides: a row a
 * search at that depth reaches is no stray.
 */
export function checkDepths(asked: number, expansionSearch: number, liveRows: number, size: number): number[] {
  const depths = [asked];
  for (const next of [expansionSearch, searchBreadth(liveRows, expansionSearch)]) {
    const depth = Math.min(next, size);
    if (depth > depths[depths.length - 1]!) depths.push(depth);
  }
  return depths;
}

/** How many passes a self-check of `k` runs on this index now. */
export function checkPasses(hnsw: HnswIndex, k: number): number {
  return depthsFor(hnsw, k).length;
}

const depthsFor = (hnsw: HnswIndex, k: number) => checkDepths(hnsw.askedFor(k), hnsw.params.expansionSearch, hnsw.liveSize, hnsw.size);

/**
 * For each row (`rids[i]` at `versions[i]`, its vector at row i of `vectors`): does a search by
 * its own vector find it among the first `k` current results, at the depth searches of this
 * index run at (planner.ts searchBreadth)? One batched native search on the index's threads:
 * the write checks of a page cost one call, not one per row.
 *
 * In passes of growing depth, each on the rows the last one missed: ef ≈ k (the index is built
 * with a small expansion_search, hnsw.ts SELF_CHECK_EF), then params.expansionSearch, then the
 * search breadth where the graph is large enough for searches to run deeper. So the answer is the
 * deepest pass's at a fraction of its cost: on 100k × 768 clustered rows a self-search of every
 * row took 17.5 s at ef 64 and 6.6 s at ef 10, which missed 4.8 % of them (ef 64: 0.15 %).
 * The last pass matters on large graphs: on 1M × 768 a search at ef 64 missed 10 % of rows
 * that searches, at ef ~400 there, reach; scored apart as strays they cost every search 22 ms.
 * `passes` runs one pass alone, so a caller working in short steps can gather the few rows
 * each step's pass misses into batches for the next (strays.ts DeeperChecks).
 *
 * `isCurrent` is read once the searches end: rows written meanwhile count as they are then.
 */
export async function findsSelves(
  hnsw: HnswIndex,
  rids: ArrayLike<number>,
  versions: ArrayLike<number>,
  vectors: Float32Array | Int8Array,
  k: number,
  isCurrent: IsCurrent,
  { passes = "all", background = false }: CheckOptions = {},
): Promise<boolean[]> {
  const n = rids.length;
  if (n === 0) return [];
  const depths = depthsFor(hnsw, k);
  const [first, ...deeper] = passes === "all" ? depths : depths.slice(passes, passes + 1);
  if (first === undefined) return new Array(n).fill(false);
  const search = (r: ArrayLike<number>, v: ArrayLike<number>, x: Float32Array | Int8Array, depth: number) => selfSearch(hnsw, r, v, x, k, depth, isCurrent, background);
  const out = await search(rids, versions, vectors, first);
  for (const depth of deeper) {
    const missed = out.flatMap((hit, i) => (hit ? [] : [i]));
    if (missed.length === 0) break;
    const again = await search(missed.map((i) => rids[i]!), missed.map((i) => versions[i]!), rowsOf(vectors, missed, hnsw.dims), depth);
    missed.forEach((i, j) => (out[i] = again[j]!));
  }
  return out;
}

/** One batched search asking `asked` results (so ef ≥ asked): is each row among the first `k` current? */
async function selfSearch(
  hnsw: HnswIndex,
  rids: ArrayLike<number>,
  versions: ArrayLike<number>,
  vectors: Float32Array | Int8Array,
  k: number,
  asked: number,
  isCurrent: IsCurrent,
  background: boolean,
): Promise<boolean[]> {
  const n = rids.length;
  const [keys, distances] = await hnsw.searchOffLoop(vectors, asked, n, background);
  const words = keyWords(keys);
  const out: boolean[] = [];
  for (let q = 0; q < n; q++) {
    const ownRid = rids[q]!;
    const ownVersion = versions[q]! % VERSION_SPAN;
    let current = 0;
    let hit = false;
    for (let j = q * asked; j < (q + 1) * asked && current < k; j++) {
      const d = distances[j]!;
      if (!Number.isFinite(d) || d >= 3.0e38) break;
      const rid = words[2 * j]!;
      const version = words[2 * j + 1]!;
      if (rid === ownRid && version === ownVersion) {
        hit = true;
        break;
      }
      if (isCurrent(rid, version)) current++;
    }
    out.push(hit);
  }
  return out;
}

/** Rows `indices` of an n × dims matrix, in a new buffer of the same type (usearch ignores view offsets). */
function rowsOf<T extends Float32Array | Int8Array>(vectors: T, indices: number[], dims: number): T {
  const out = (vectors instanceof Int8Array ? new Int8Array(indices.length * dims) : new Float32Array(indices.length * dims)) as T;
  indices.forEach((from, to) => out.set(vectors.subarray(from * dims, (from + 1) * dims), to * dims));
  return out;
}
