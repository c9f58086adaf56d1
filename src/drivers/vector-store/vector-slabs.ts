// The mirror's vectors by rid (mirror.ts): each row's unit f32 vector while the collection is
// small enough, and its i8 codes (quantize.ts) unless the index lends them (lent-codes.ts).

/** Rows gathered per exactSearch call: 2,048 rows × 384 dims × 4 B = 3 MiB. */
export const GATHER_ROWS = 2048;

/**
 * Vectors live in slabs of SLAB_ROWS rids, each a Float32Array that starts with its own gather
 * area (GATHER_ROWS rows, fewer while the slab is smaller): `copyWithin` fills it without allocating (4× faster than copying between arrays through
 * subarray views), and the view handed to usearch has byte offset 0 (its JS exactSearch ignores
 * a view's offset). One ArrayBuffer tops out at 4 GiB under Bun/JSC; a slab at 3,072 dims is
 * 3.25 GB, so no collection size is bounded by it.
 *
 * A slab grows ×1.5 while it is small; past SMALL_SLAB_ROWS it takes its full size at once. A
 * growth copies the slab into a new array, and the copy's first touch of its pages is what costs:
 * growing ×1.5 to 262k rows at 384 dims took ~22 µs a row, and the last copies held the event loop
 * 0.7 s each (docs/performance.md, "Mirror growth"). A new array is not touched until rows are
 * written to it (its pages are the system's zero pages until then), so the full size costs
 * address space, not memory; `bytes()` counts the rows used.
 */
const SLAB_SHIFT = 18;
const SLAB_ROWS = 1 << SLAB_SHIFT;
const SLAB_MASK = SLAB_ROWS - 1;
/** A slab this small grows ×1.5 (copies are cheap); past it, it takes SLAB_ROWS at once. */
const SMALL_SLAB_ROWS = 4096;

export class VectorSlabs {
  /** False once the f32 vectors are dropped (a compact mirror); their slabs are then empty. */
  floats = true;
  /** False while the index lends the codes; their slabs are then empty. */
  codes = true;
  /** [GATHER_ROWS gather rows | one unit vector per rid of the slab], SLAB_ROWS rids per slab. */
  private readonly slabs: Float32Array[] = [];
  /** The same layout holding each vector as i8 codes (quantize.ts), for the wide exact scan. */
  private readonly codeSlabs: Int8Array[] = [];
  /** Rows in each slab's gather area: as many as the slab holds, up to GATHER_ROWS (small collections stay small). */
  private readonly gatherRows: number[] = [];
  /** Rids each slab has room for (past its gather area). */
  private readonly slabRows: number[] = [];
  /** Rids each slab has been asked to hold (one past the highest `ensure`d): what `bytes()` counts. */
  private readonly usedRows: number[] = [];

  constructor(readonly dims: number) {}

  /** Makes room for `rid`. */
  ensure(rid: number): void {
    const index = rid >>> SLAB_SHIFT;
    while (this.slabs.length <= index) {
      // Slabs before the last are full; the last grows ×1.5 from a small start.
      const last = this.slabs.length - 1;
      if (last >= 0) this.growSlab(last, SLAB_ROWS - 1);
      this.slabs.push(new Float32Array(0));
      this.codeSlabs.push(new Int8Array(0));
      this.gatherRows.push(0);
      this.slabRows.push(0);
      this.usedRows.push(0);
    }
    const within = rid & SLAB_MASK;
    this.growSlab(index, within);
    if (within >= this.usedRows[index]!) this.usedRows[index] = within + 1;
  }

  /** Makes slab `index` hold rid offset `within`, moving its rows past a larger gather area. */
  private growSlab(index: number, within: number): void {
    const d = this.dims;
    const oldGather = this.gatherRows[index]!;
    const rows = this.slabRows[index]!;
    if (within < rows) return;
    const grown = Math.max(within + 1, Math.ceil(rows * 1.5), 64);
    const next = grown > SMALL_SLAB_ROWS ? SLAB_ROWS : grown;
    const gather = Math.min(GATHER_ROWS, next);
    if (this.floats) {
      const grown = new Float32Array((gather + next) * d);
      grown.set(this.slabs[index]!.subarray(oldGather * d), gather * d);
      this.slabs[index] = grown;
    }
    if (this.codes) {
      const codes = new Int8Array((gather + next) * d);
      codes.set(this.codeSlabs[index]!.subarray(oldGather * d), gather * d);
      this.codeSlabs[index] = codes;
    }
    this.gatherRows[index] = gather;
    this.slabRows[index] = next;
  }

  /** The slab holding `rid`'s vector; it starts at `offsetOf(rid)`. For tight loops (no view allocated). */
  slabOf(rid: number): Float32Array {
    return this.slabs[rid >>> SLAB_SHIFT]!;
  }

  /** The i8 codes holding `rid`'s vector (while `codes`); they start at `offsetOf(rid)`. */
  codeSlabOf(rid: number): Int8Array {
    return this.codeSlabs[rid >>> SLAB_SHIFT]!;
  }

  offsetOf(rid: number): number {
    return (this.gatherRows[rid >>> SLAB_SHIFT]! + (rid & SLAB_MASK)) * this.dims;
  }

  /** Drops the f32 vectors for good. */
  dropFloats(): void {
    this.floats = false;
    for (let i = 0; i < this.slabs.length; i++) this.slabs[i] = new Float32Array(0);
  }

  /** Drops the codes: the index lends them now. */
  dropCodes(): void {
    this.codes = false;
    for (let i = 0; i < this.codeSlabs.length; i++) this.codeSlabs[i] = new Int8Array(0);
  }

  /** Makes code slabs again (zeroed) for the caller to fill: the index lends them no more. */
  restoreCodes(): void {
    if (this.codes) return;
    this.codes = true;
    for (let i = 0; i < this.codeSlabs.length; i++) this.codeSlabs[i] = new Int8Array((this.gatherRows[i]! + this.slabRows[i]!) * this.dims);
  }

  /**
   * Copies the f32 vectors of `rids[from]` and the rids after it that share its slab (at most
   * GATHER_ROWS) into that slab's gather area; returns a view of them at byte offset 0
   * (rows taken = length / dims). Valid until the next gather: use it synchronously.
   */
  gather(rids: ArrayLike<number>, from: number, max: number): Float32Array {
    if (!this.floats) throw new Error("a compact mirror keeps no f32 vectors");
    return this.gatherFrom(this.slabs, rids, from, max);
  }

  /** `gather` for the i8 codes (while `codes`). */
  gatherCodes(rids: ArrayLike<number>, from: number, max: number): Int8Array {
    if (!this.codes) throw new Error("the index holds these codes");
    return this.gatherFrom(this.codeSlabs, rids, from, max);
  }

  private gatherFrom<T extends Float32Array | Int8Array>(slabs: T[], rids: ArrayLike<number>, from: number, max: number): T {
    const d = this.dims;
    const slab = rids[from]! >>> SLAB_SHIFT;
    const data = slabs[slab]!;
    const gather = this.gatherRows[slab]!;
    const end = Math.min(rids.length - from, max, gather);
    let n = 0;
    for (; n < end; n++) {
      const rid = rids[from + n]!;
      if (rid >>> SLAB_SHIFT !== slab) break;
      const src = (gather + (rid & SLAB_MASK)) * d;
      data.copyWithin(n * d, src, src + d);
    }
    return data.subarray(0, n * d) as T;
  }

  /** The bytes of the rows used and the gather areas: a slab's capacity past them is untouched. */
  bytes(): number {
    let rows = 0;
    for (let i = 0; i < this.slabs.length; i++) rows += this.gatherRows[i]! + this.usedRows[i]!;
    return rows * this.dims * ((this.floats ? 4 : 0) + (this.codes ? 1 : 0));
  }
}
