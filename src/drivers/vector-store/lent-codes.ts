// A compact mirror's i8 codes, read from the HNSW index instead of kept twice (issue 16: ≤ 1.5 KB
// a vector at 768 dimensions). The i8 index is given each row's codes as they are (mirror.ts
// gatherCodes) and keeps them byte for byte, so once a row's current version is in the graph
// the mirror's copy is a second one: at 1M × 768, 0.77 KB a vector of 1.9–2.0. Here the mirror
// keeps only the codes of rows the graph does not hold yet (written, waiting for their insertion:
// later.ts) and reads the rest with the graph's `gather` (native/graph/graph.cpp), one native call
// a gather of up to GATHER_ROWS rows.
//
// Rows leave `pending` only when the graph holds their current version with the same codes: an
// index file written before indexes were given the mirror's codes (usearch's own cast differs)
// keeps those rows here. The mirror lends from one index at a time; the generation moves it to
// every index it serves from (generation.ts `hnsw`), and a move keeps here whatever the new index
// lacks, or gives the codes back to the mirror (`Mirror.lend`) when that is most of them.
import type { HnswIndex } from "./hnsw.ts";

export class LentCodes {
  /** Codes of rows whose current version the graph does not hold (yet), each in its own buffer. */
  private readonly pending = new Map<number, Int8Array>();
  private readonly scratch: Int8Array;
  private readonly keys: BigUint64Array;
  /** The keys as (rid, version) word pairs (little-endian: hnsw.ts keyWords). */
  private readonly words: Uint32Array;

  constructor(
    readonly index: HnswIndex,
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

  /**
   * Of the rows `rids[i]` at `versions[i]` the index holds, those still current whose stored codes
   * equal `own(i)`: the mirror need not keep their codes. For `lend` and `settle`.
   */
  held(rids: ArrayLike<number>, versions: ArrayLike<number>, own: (i: number) => Int8Array): boolean[] {
    const n = rids.length;
    const present = this.index.has(rids, versions);
    const out = new Array<boolean>(n).fill(false);
    const asked = Array.from(rids, (rid, i) => present[i]! && this.versionOf(rid) % 4294967296 === versions[i]! % 4294967296);
    for (let at = 0; at < n; at += this.rows) {
      const m = Math.min(this.rows, n - at);
      for (let i = 0; i < m; i++) {
        this.words[2 * i] = asked[at + i] ? rids[at + i]! : 0xffffffff;
        this.words[2 * i + 1] = asked[at + i] ? versions[at + i]! % 4294967296 : 0xffffffff;
      }
      const theirs = this.scratch.subarray(0, m * this.dims);
      this.index.graph.gather(this.keys.subarray(0, m), theirs);
      for (let i = 0; i < m; i++) if (asked[at + i]) out[at + i] = sameCodes(own(at + i), theirs, i * this.dims, this.dims);
    }
    return out;
  }

  /** Every pending row the graph now holds with the same codes leaves `pending` (a load, a page at a time). */
  settleAll(): void {
    const rids = [...this.pending.keys()];
    this.settle(rids, rids.map(this.versionOf));
  }

  /** After the index added rows: those now held with the same codes leave `pending`. */
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
    const held = this.held(waiting, at, (i) => this.pending.get(waiting[i]!)!);
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
 * The lending `Mirror.lend` starts: codes read from `index` for every row of `rids` it holds with
 * the same codes as `own(from)` gathers, the others' kept. Null when more than an eighth of the
 * rows would be kept (an index being rebuilt, a file of usearch's own cast): the mirror then
 * keeps its codes.
 */
export function lendFrom(index: HnswIndex, dims: number, versionOf: (rid: number) => number, rows: number, rids: Uint32Array, own: (from: number) => Int8Array): LentCodes | null {
  const lent = new LentCodes(index, dims, versionOf, rows);
  for (let i = 0; i < rids.length; ) {
    const codes = own(i);
    const step = rids.subarray(i, (i += codes.length / dims));
    const held = lent.held(step, Array.from(step, versionOf), (j) => codes.subarray(j * dims, (j + 1) * dims));
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

function sameCodes(a: Int8Array, b: Int8Array, at: number, dims: number): boolean {
  for (let j = 0; j < dims; j++) if (a[j] !== b[at + j]) return false;
  return true;
}
