// A usearch HNSW index, metric cosine, keyed by row *version*: key = vec_seq · 2³² + rid (vec_seq:
// the change sequence that stored the row's vector). The rid sits in the low bits because
// usearch's key table hashes a u64 key by identity (std::hash) and probes linearly from its low
// bits: with vec_seq there, a write batch's rows (one vec_seq) collided, and loading 40k rows
// took 1.4 s instead of 20 ms, adds ~5× longer. Its JS binding has no filter callback and cannot
// change expansion_search on a live index, so filtering is done by oversampling in search.ts;
// usearch searches with ef = max(expansion_search, results asked for), so asking for more
// results is how a search is widened (planner.ts searchBreadth).
//
// Why versions, and why usearch `remove` is never called (issue 12, item 1): usearch 2.25's
// `remove` only marks a slot free (its key becomes the free key, the node stays in the graph and
// in the file as `count_deleted`). Loading or viewing such a file, the JS binding then calls
// `try_reserve(ceil2(size()))` with `size()` = present keys only; when the slot lookup's capacity
// for that many keys is below present + deleted slots, `index_dense_gt::try_reserve` shrinks
// `vectors_lookup_` yet memcpy's the old, larger count into it: a heap overflow that aborts the
// process (`free(): corrupted unsorted chunks`). 3,000 rows less every third (2,000 present,
// 1,000 deleted) overflows; 1,000 less a third does not, which is why small tables survived.
// Slot reuse after a remove also relinks a recycled node in place. So: a replaced vector gets a
// new key and the old key simply goes dead (the mirror says which version is current), dead keys
// are skipped in results and counted, and the generation compacts (rebuilds) the index once the
// dead share passes COMPACT_DEAD_SHARE. Files we write therefore never hold a deleted slot,
// and checkpoint.ts refuses any file that does before usearch sees it.
import { type Graph, openGraph, type Vectors } from "./graph-binding.ts";
import { CountedSet, StrayCodes } from "./stray-scan.ts";
import type { IndexParams } from "./types.ts";

export const VERSION_SPAN = 2 ** 32;

/**
 * Batched searches of fewer vectors than this run on one thread: usearch starts its threads per
 * call (~30-60 µs). Measured on raw usearch, 150k rows, i8, idle machine: from 4 vectors two
 * threads were faster at every depth and width (768 dims, ef 10: 121 → 100 µs a row at 4, 125 →
 * 72 at 8; ef 64: 323 → 188 at 4; 256 dims, ef 10: 54 → 45 at 4), and slower only at 2 vectors of
 * ef 10 at 256 dims. A check or sweep step holds ~5 ms of work (pace.ts), which at 1M × 768 is
 * ~10 rows: below the 64 this once was, so the sweep of a 1M × 768 index ran on one thread
 * (937 s; 558 s from 4 rows, ~1.4 cores; two threads from 2 rows at depth ≥ 64 too: 550 s). Adds
 * always name the configured count: the binding reserves per-thread contexts only when the index
 * grows, so an index first grown by a one-thread add refuses a later two-thread add ("Reserve
 * capacity ahead of insertions!").
 */
const THREADED_ROWS = 4;
const threadsFor = (rows: number, threads: number) => (rows < THREADED_ROWS ? 1 : threads);

/**
 * The index's own expansion_search. usearch searches with ef = max(expansion_search, results asked
 * for), and every query asks for at least its breadth (planner.ts searchBreadth, from
 * params.expansionSearch up), so this only sets the depth of a self-check's first pass
 * (self-search.ts), which asks for ~10.
 */
const SELF_CHECK_EF = 8;

/** The index key of a row version. vec_seq wraps at 2³² (four billion write batches); rids are u32 (mirror). */
export function keyOf(rid: number, version: number): bigint {
  return BigInt(version % VERSION_SPAN) * 4294967296n + BigInt(rid);
}

function keysOf(rids: ArrayLike<number>, versions: ArrayLike<number>): BigUint64Array {
  return BigUint64Array.from(Array.from(rids, (r, i) => keyOf(r, versions[i]!)));
}

/**
 * Found keys as (rid, version) word pairs: a u64 key's low word is the rid, its high word the
 * version (x86-64 and arm64 are little-endian). Two BigInt divisions per result cost more than the
 * rest of reading a 320-result filtered search.
 */
export function keyWords(keys: BigUint64Array): Uint32Array {
  return new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2);
}

/** Is (rid, version) the row's current vector? Supplied by the generation from its mirror. */
export type IsCurrent = (rid: number, version: number) => boolean;

export class HnswIndex {
  readonly graph: Graph;
  /** Keys in the index that name no current row version (replaced or deleted rows). */
  dead = 0;
  /**
   * Rows whose current version a search by its own vector did not reach: HNSW's pruning leaves
   * some nodes with no way in (~0.1-0.3 % on random 64-256-dim vectors at M=16). Searches
   * score these exactly beside the graph's candidates (search.ts withStrays), so every row
   * is findable by its own vector. Filled by the generation's sweep and its write checks.
   */
  readonly strays = new CountedSet();
  /** The strays' codes in one buffer for the searches' scan of them (stray-scan.ts). */
  readonly strayCodes = new StrayCodes();
  /** Keys an `addAsync` is inserting. */
  private readonly flying = new Set<bigint>();
  /** Told of every add once it is done: a mirror lending its codes from this index (lent-codes.ts). */
  onAdded: ((rids: ArrayLike<number>, versions: ArrayLike<number>) => void) | null = null;

  constructor(
    readonly dims: number,
    readonly params: IndexParams,
  ) {
    this.graph = openGraph(dims, params, SELF_CHECK_EF);
  }

  /** Every key, live or dead. */
  get size(): number {
    return this.graph.size();
  }

  get liveSize(): number {
    return this.size - this.dead;
  }

  /**
   * Adds row versions not yet present (a replay may offer one twice). `vectors`: n × dims, offset 0;
   * the store gives only the mirror's i8 codes (adds.ts), which a compact mirror reads back (lent-codes.ts).
   * With `links`, answers each row's back links (as `addAsync`); else null (a rebuild or
   * compaction, whose sweep follows, asks for none).
   */
  add(rids: ArrayLike<number>, versions: ArrayLike<number>, vectors: Vectors, links = false): Uint8Array | null {
    const linked = links ? new Uint8Array(rids.length) : null;
    if (rids.length === 0) return linked;
    this.graph.add(keysOf(rids, versions), vectors, this.params.threads, linked ?? undefined);
    this.onAdded?.(rids, versions);
    return linked;
  }

  /**
   * `add` on a thread of its own. Searches may run meanwhile; `vectors` must be the caller's own
   * buffer, unchanged until this settles.
   *
   * The generation counts a key dead when it retires a row version the index holds (`has`). A
   * version replaced or deleted while its insertion ran would escape that count, or, retired
   * between the insertion's end and this method's, be counted twice. So keys in flight are not
   * "held" for `has`, and those whose row version stopped being current are counted here.
   *
   * Answers each row's back links once all are in (Graph `addAsync`'s `linked`: 0 a stray at the
   * base level, 255 a version already held).
   */
  async addAsync(rids: ArrayLike<number>, versions: ArrayLike<number>, vectors: Vectors, isCurrent: IsCurrent): Promise<Uint8Array> {
    if (rids.length === 0) return new Uint8Array(0);
    // One at a time: the binding reserves room under the graph's lock on the calling thread, which
    // would hold the event loop until an insertion in flight (a rebuild's, the later indexer's) ends.
    const before = this.inserting;
    const mine = before.then(() => this.addAsyncNow(rids, versions, vectors, isCurrent));
    this.inserting = mine.catch(() => {});
    return mine;
  }

  private inserting: Promise<unknown> = Promise.resolve();

  private async addAsyncNow(rids: ArrayLike<number>, versions: ArrayLike<number>, vectors: Vectors, isCurrent: IsCurrent): Promise<Uint8Array> {
    const linked = new Uint8Array(rids.length);
    const keys = keysOf(rids, versions);
    const present = this.graph.contains(keys);
    const fresh = keys.filter((_, i) => !present[i]);
    for (const key of fresh) this.flying.add(key);
    try {
      await this.graph.addAsync(keys, vectors, this.params.threads, linked);
    } finally {
      for (const key of fresh) this.flying.delete(key);
    }
    const words = keyWords(fresh);
    for (let i = 0; i < fresh.length; i++) if (!isCurrent(words[2 * i]!, words[2 * i + 1]!)) this.dead++;
    this.onAdded?.(rids, versions);
    return linked;
  }

  /** For each (rid, version): is that key in the index (and not still being inserted)? */
  has(rids: ArrayLike<number>, versions: ArrayLike<number>): boolean[] {
    if (rids.length === 0) return [];
    const keys = keysOf(rids, versions);
    const present = this.graph.contains(keys);
    if (this.flying.size > 0) keys.forEach((key, i) => (present[i] &&= !this.flying.has(key)));
    return present;
  }

  /**
   * Approximate top-k current rows (nearest first), asking usearch for k widened by the dead
   * share so dead keys do not crowd live rows out. `exhausted`: the index had no more to give.
   * `cut`: the walk ended short of what the index holds, twice (below). `query` must own its
   * buffer. One thread: the loop's, or with `meanwhile` a helper thread while the loop runs it (it
   * must make no call on this index).
   */
  search(query: Float32Array | Int8Array, k: number, isCurrent: IsCurrent, meanwhile?: () => void): { rids: number[]; distances: Float32Array; exhausted: boolean; cut: boolean } {
    const asked = this.askedFor(k);
    let [keys, dist] = meanwhile ? this.searchBeside(query, asked, meanwhile) : this.graph.search(query, asked, 1);
    // usearch links a new node from its top level down: a search beside the insertion can reach
    // it above before its base level has links, and end there with one match (the graph's
    // contract test saw it in ~1 of 600 searches beside a fill). Asked again, the insertion has
    // moved on about half the time; if not, `cut` says so and the caller answers another way. A
    // walk also ends short with no insertion near, where rows of one vector link only to one another.
    let real = reached(dist);
    const short = () => real < asked && asked < this.size;
    if (short()) {
      [keys, dist] = this.graph.search(query, asked, 1);
      real = reached(dist);
    }
    const words = keyWords(keys);
    const rids: number[] = [];
    const distances: number[] = [];
    for (let i = 0; i < real; i++) {
      const rid = words[2 * i]!;
      if (!isCurrent(rid, words[2 * i + 1]!)) continue;
      rids.push(rid);
      distances.push(dist[i]!);
    }
    return { rids, distances: Float32Array.from(distances), exhausted: real < asked || asked >= this.size, cut: short() };
  }

  private searchBeside(query: Float32Array | Int8Array, asked: number, meanwhile: () => void): [BigUint64Array, Float32Array, Uint32Array] {
    this.graph.searchBegin(query, asked);
    try {
      meanwhile();
    } catch (e) {
      this.graph.searchEnd(); // ended whatever `meanwhile` did: the next call on the graph may reserve
      throw e;
    }
    return this.graph.searchEnd();
  }

  /**
   * `graph.searchAsync`, one at a time: the graph keeps thread contexts for one beside an
   * insertion and the loop's own search (src/drivers/vector-store/graph-binding.ts). A self-check's searches
   * (self-search.ts) run this way, off the event loop.
   */
  searchOffLoop(queries: Vectors, asked: number, rows: number, background: boolean): ReturnType<Graph["searchAsync"]> {
    const mine = this.searchingOff.then(() => this.graph.searchAsync(queries, asked, threadsFor(rows, this.params.threads), background));
    this.searchingOff = mine.catch(() => {});
    return mine;
  }

  private searchingOff: Promise<unknown> = Promise.resolve();

  /** Results to ask usearch for so that about `k` current ones come back: k widened by the dead share. */
  askedFor(k: number): number {
    const widened = Math.ceil((k * this.size) / Math.max(1, this.liveSize));
    return Math.max(1, Math.min(widened, this.size || 1));
  }

  save(path: string): void {
    this.graph.save(path);
  }

  /** `save` off the event loop; the count of keys in the file. */
  saveAsync(path: string): Promise<number> {
    return this.graph.saveAsync(path);
  }

  load(path: string): void {
    this.graph.load(path);
  }

  /**
   * An estimate: each key's codes (a byte a dimension) plus its level-0 graph (2M links of 4 B)
   * and header; the slots reserved ahead (the binding reserves ceil2(size)) hold only lookup
   * entries until used (~16 B each).
   */
  memoryBytes(): number {
    const perVector = this.dims + this.params.connectivity * 2 * 4 + 16;
    return this.size * perVector + (this.graph.capacity() - this.size) * 16;
  }
}

/** Matches a search found: usearch pads the rest with +Infinity; a real match has a finite distance. */
function reached(distances: Float32Array): number {
  let n = 0;
  while (n < distances.length && Number.isFinite(distances[n]!) && distances[n]! < 3.0e38) n++;
  return n;
}
