// A compact mirror's i8 codes, read from the HNSW index instead of kept twice (issue 16: ≤ 1.5 KB
// a vector at 768 dimensions). The i8 index is given each row's codes as they are (mirror.ts
// gatherCodes) and keeps them byte for byte, so once a row's current version is in the graph
// the mirror's copy is a second one: at 1M × 768, 0.77 KB a vector of 1.9–2.0. Here the mirror
// keeps only the codes of rows the graph does not hold yet (written, waiting for their insertion:
// later.ts) and reads the rest with the graph's `gather` (native/graph/graph.cpp), one native call
// a gather of up to GATHER_ROWS rows.
//
// Rows leave `pending` once the graph holds their current version: the store gives an index only
// the mirror's codes (adds.ts), never f32 for usearch to cast, so a version it holds has the same
// codes; an index file of any other making is of another FORMAT and rebuilt (checkpoint.ts). The mirror lends from one index at a time; the generation moves it to
// every index it serves from (generation.ts `hnsw`), and a move keeps here whatever the new index
// lacks, or gives the codes back to the mirror (`Mirror.lend`) when that is most of them.
import type { Graph } from "./graph-binding.ts";

/** What lending reads of an index (hnsw.ts HnswIndex), named here so that the mirror need not know the index. */
export interface CodeLender {
  readonly graph: Pick<Graph, "gather">;
  /** Whether the index holds each rid at its version (and has finished adding it). */
  has(rids: ArrayLike<number>, versions: ArrayLike<number>): boolean[];
  /** Told of every row version the index has added. */
  onAdded: ((rids: ArrayLike<number>, versions: ArrayLike<number>) => void) | null;
}

export class LentCodes {
  /** Codes of rows whose current version the graph does not hold (yet), each in its own buffer. */
  private readonly pending = new Map<number, Int8Array>();
  private readonly scratch: Int8Array;
  private readonly keys: BigUint64Array;
  /** The keys as (rid, version) word pairs (little-endian: hnsw.ts keyWords). */
  private readonly words: Uint32Array;

  constructor(
    readonly index: CodeLender,
    private readonly dims: number,
    private readonly versionOf: (rid: number) => number,
    /** Rows a gather takes at most (the mirror's GATHER_ROWS). */
    private readonly rows: number,
  ) {
    this.scratch = new Int8Array(rows * dims);
    this.keys = new BigUint64Array(rows);
    this.words = new Uint32Array(this.keys.buffer);
    index.onAdded = this.heard;
  }

  private readonly heard = (rids: ArrayLike<number>, versions: ArrayLike<number>) => this.settle(rids, versions);

  /** Stops hearing of the index's adds (the mirror lends from another index, or keeps its codes again). */
  close(): void {
    if (this.index.onAdded === this.heard) this.index.onAdded = null;
  }

  get pendingRows(): number {
    return this.pending.size;
  }

  /** A written row's codes (its own buffer), kept until the graph holds its version. */
  set(rid: number, codes: Int8Array): void {
    this.pending.set(rid, codes);
  }

  delete(rid: number): void {
    this.pending.delete(rid);
  }

  /**
   * The codes of rids[from] and the rows after it, at most `max` and `rows`, row after row in a
   * scratch buffer; a view at byte offset 0 (rows taken = length / dims), valid until the next call.
   */
  gather(rids: ArrayLike<number>, from: number, max: number): Int8Array {
    const n = Math.min(rids.length - from, max, this.rows);
    const d = this.dims;
    const kept = this.pending.size > 0;
    for (let i = 0; i < n; i++) {
      const rid = rids[from + i]!;
      if (kept && this.pending.has(rid)) {
        this.words[2 * i] = this.words[2 * i + 1] = 0xffffffff; // skipped by the native gather
      } else {
        this.words[2 * i] = rid;
        this.words[2 * i + 1] = this.versionOf(rid) % 4294967296;
      }
    }
    const out = this.scratch.subarray(0, n * d);
    const missing = this.index.graph.gather(this.keys.subarray(0, n), out);
    // A row neither kept here nor in the graph would score as a zero vector: never findable.
    if (missing > 0) throw new Error(`${missing} rows' codes are neither in the index nor in the mirror`);
    if (kept) {
      for (let i = 0; i < n; i++) {
        const own = this.pending.get(rids[from + i]!);
        if (own) out.set(own, i * d);
      }
    }
    return out;
  }

  /** Whether the index holds each row `rids[i]` at `versions[i]`, its current version: the mirror need not keep its codes. */
  held(rids: ArrayLike<number>, versions: ArrayLike<number>): boolean[] {
    const present = this.index.has(rids, versions);
    return present.map((yes, i) => yes && this.versionOf(rids[i]!) % 4294967296 === versions[i]! % 4294967296);
  }

  /** Every pending row the graph now holds leaves `pending` (a load, a page at a time). */
  settleAll(): void {
    const rids = [...this.pending.keys()];
    this.settle(rids, rids.map(this.versionOf));
  }

  /** After the index added rows: those now held leave `pending`. */
  private settle(rids: ArrayLike<number>, versions: ArrayLike<number>): void {
    const waiting: number[] = [];
    const at: number[] = [];
    for (let i = 0; i < rids.length; i++) {
      if (this.pending.has(rids[i]!)) {
        waiting.push(rids[i]!);
        at.push(versions[i]!);
      }
    }
    if (waiting.length === 0) return;
    const held = this.held(waiting, at);
    waiting.forEach((rid, i) => held[i] && this.pending.delete(rid));
  }

  /** Hands every row's codes to `write` (the mirror keeps them again), and stops lending. */
  giveBack(rids: Uint32Array, write: (rid: number, codes: Int8Array) => void): void {
    for (let i = 0; i < rids.length; ) {
      const codes = this.gather(rids, i, this.rows);
      for (let j = 0; j < codes.length / this.dims; j++, i++) write(rids[i]!, codes.subarray(j * this.dims, (j + 1) * this.dims));
    }
    this.close();
  }

  /** An estimate: each pending row's codes plus ~80 B of typed array and map entry; the scratch buffers. */
  bytes(): number {
    return this.pending.size * (this.dims + 80) + this.scratch.byteLength + this.keys.byteLength;
  }
}

/**
 * The lending `Mirror.lend` starts: codes read from `index` for every row of `rids` it holds, the
 * others' (`own(from)` gathers them) kept. Null when more than an eighth of the rows would be kept
 * (an index being rebuilt): the mirror then keeps its codes.
 */
export function lendFrom(index: CodeLender, dims: number, versionOf: (rid: number) => number, rows: number, rids: Uint32Array, own: (from: number) => Int8Array): LentCodes | null {
  const lent = new LentCodes(index, dims, versionOf, rows);
  for (let i = 0; i < rids.length; ) {
    const codes = own(i);
    const step = rids.subarray(i, (i += codes.length / dims));
    const held = lent.held(step, Array.from(step, versionOf));
    held.forEach((yes, j) => yes || lent.set(step[j]!, codes.slice(j * dims, (j + 1) * dims)));
    if (keepsTooMany(lent.pendingRows, rids.length)) {
      lent.close();
      return null;
    }
  }
  return lent;
}

/** Past an eighth of the live rows (and 1,024) the mirror had better keep all the codes itself. */
export function keepsTooMany(kept: number, liveRows: number): boolean {
  return kept > Math.max(1024, liveRows / 8);
}
