// The in-memory mirror of one generation: every live row's i8 codes (and, while the collection is
// small enough, its f32 vector), typed metadata, primary key and (with the f32 vectors) embedded
// text, indexed by rid; what a row holds beside its vector is kept by row-fields.ts, which the
// mirror extends. It feeds the exact path (gather + usearch exactSearch), the re-score of HNSW
// candidates, the in-memory filter predicate and the hits themselves, so a search on a ready
// generation needs no SQL for broad or unfiltered queries.
// libSQL stays the source of truth.
//
// Compact: past `floatBytes` of f32 vectors (MirrorMemory) the mirror drops its f32 copy and its
// texts for good and keeps the codes only, a quarter of the f32 size. Its scores are then the
// codes' cosines, close but not exact; search.ts reads the few final candidates' f32 vectors and
// texts back from libSQL (refine.ts) and returns exact scores as before. A compact mirror then
// reads the codes of the rows the index holds from the index itself (`lend`, lent-codes.ts).
import { ColumnOrders } from "./column-order.ts";
import { realClock } from "./pace.ts";
import { quantizeInto } from "./quantize.ts";
import { type CodeLender, keepsTooMany, type LentCodes, lendFrom } from "./lent-codes.ts";
import { RowFields } from "./row-fields.ts";
import { GATHER_ROWS, VectorSlabs } from "./vector-slabs.ts";
import type { GenerationSpec, MetadataValue } from "../store-api/index.ts";

export { GATHER_ROWS } from "./vector-slabs.ts";

/**
 * Scales `data[from, from + dims)` to unit length. The mirror keeps unit vectors so the exact
 * path can score by inner product, twice as fast as usearch's cosine kernel (cosine is
 * invariant to scale, so the index and every score stay the same to f32 rounding).
 */
export function normalizeInPlace(data: Float32Array, from: number, dims: number): void {
  let norm = 0;
  for (let j = from; j < from + dims; j++) norm += data[j]! * data[j]!;
  if (norm === 0 || !Number.isFinite(norm)) return;
  const inv = 1 / Math.sqrt(norm);
  for (let j = from; j < from + dims; j++) data[j]! *= inv;
}

/** How much of each row the mirror keeps in memory (VectorStoreOptions). */
export interface MirrorMemory {
  /** Most bytes of f32 vectors kept (live rows × dims × 4) before the mirror turns compact (default: no limit). */
  floatBytes?: number;
  /** How long writes must have paused before a column order is made again (default ORDER_QUIET_MS). */
  orderQuietMs?: number;
  /** Between steps of background work (the keyword fill): the generation's turn for the foreground (pace.ts). */
  turn?: () => Promise<void>;
  /** The generation's clock (pace.ts StoreClock.now): when writes last changed the rows the orders hold. */
  now?: () => number;
}

export class Mirror extends RowFields {
  readonly dims: number;
  /** False once compact: only the i8 codes are kept (and the f32 slabs are empty). */
  override hasFloats = true;
  private readonly floatBytes: number;
  /** A compact mirror's set() normalizes here before quantizing. */
  private scratch: Float32Array | null = null;
  private readonly vectors: VectorSlabs;
  /** Set while the index lends the codes (`lend`): the slabs then keep none. */
  private lent: LentCodes | null = null;
  private live: Uint8Array;
  /** Each row's vector version (its `vec_seq`): with the rid it names the row's index key (hnsw.ts). */
  private versions: Float64Array;
  private capacity: number;
  /** Rows in a column's value order with their codes, for the exact path (column-order.ts), told of every row's change. */
  readonly orders: ColumnOrders;
  liveCount = 0;
  override ridEnd = 0;

  constructor(spec: GenerationSpec, memory: MirrorMemory = {}, initialRows = 1024) {
    super(spec, initialRows, memory.turn ?? (() => new Promise<void>((resolve) => setImmediate(resolve))));
    this.dims = spec.dimensions;
    this.floatBytes = memory.floatBytes ?? Infinity;
    this.vectors = new VectorSlabs(this.dims);
    if (this.floatBytes <= 0) this.compact();
    this.capacity = initialRows;
    this.live = new Uint8Array(initialRows);
    this.versions = new Float64Array(initialRows);
    this.orders = new ColumnOrders(this, (c) => this.column(c), memory.now ?? realClock.now, memory.orderQuietMs);
  }

  private ensure(rid: number): void {
    this.vectors.ensure(rid);
    if (rid < this.capacity) return;
    const next = Math.max(rid + 1, Math.ceil(this.capacity * 1.5));
    const live = new Uint8Array(next);
    live.set(this.live);
    this.live = live;
    const versions = new Float64Array(next);
    versions.set(this.versions);
    this.versions = versions;
    this.growFields(next);
    this.capacity = next;
  }

  /** The slab holding `rid`'s f32 vector; it starts at `offsetOf(rid)`. For tight loops (no view allocated). */
  slabOf(rid: number): Float32Array {
    return this.vectors.slabOf(rid);
  }

  offsetOf(rid: number): number {
    return this.vectors.offsetOf(rid);
  }

  override isLive(rid: number): boolean {
    return this.live[rid] === 1;
  }

  /** The vector version of a live rid (the `vec_seq` it was stored with). */
  versionOf(rid: number): number {
    return this.versions[rid]!;
  }

  /** Is `version` (as an index key holds it, modulo 2³²) the live row's current vector? */
  isCurrent(rid: number, version: number): boolean {
    return this.live[rid] === 1 && this.versions[rid]! % 4294967296 === version;
  }

  /** Stores a row's vector (f32, copied and scaled to unit length), metadata (already typed per column), pk, text and vector version. */
  set(rid: number, vector: Float32Array, metadata: MetadataValue[], pk: string, text: string, version = 0): void {
    this.ensure(rid);
    this.versions[rid] = version;
    const base = this.offsetOf(rid);
    if (this.hasFloats) {
      const page = this.slabOf(rid);
      page.set(vector, base);
      normalizeInPlace(page, base, this.dims);
      quantizeInto(page, base, this.dims, this.vectors.codeSlabOf(rid), base);
    } else {
      const unit = (this.scratch ??= new Float32Array(this.dims));
      unit.set(vector);
      normalizeInPlace(unit, 0, this.dims);
      if (this.lent) {
        const codes = new Int8Array(this.dims);
        quantizeInto(unit, 0, this.dims, codes, 0);
        this.lent.set(rid, codes);
      } else quantizeInto(unit, 0, this.dims, this.vectors.codeSlabOf(rid), base);
    }
    this.setMetadata(rid, metadata);
    this.writeLabels(rid, pk, text);
    if (this.live[rid] !== 1) this.liveCount++;
    this.live[rid] = 1;
    if (rid >= this.ridEnd) this.ridEnd = rid + 1;
    if (this.hasFloats && !this.floatsFit(this.liveCount)) this.compact();
  }

  /**
   * Before a load of `rows` live rows: turns compact at once if they will not fit the f32 limit,
   * instead of filling f32 slabs (and keeping texts) up to the limit only to drop them. Those were
   * a restart's peak with the default limit (docs/architecture.md#stores).
   */
  expectRows(rows: number): void {
    if (!this.floatsFit(rows)) this.compact();
  }

  /** Do `rows` rows' f32 vectors fit the limit (MirrorMemory.floatBytes)? */
  private floatsFit(rows: number): boolean {
    return rows * this.dims * 4 <= this.floatBytes;
  }

  /**
   * Drops the f32 vectors and the texts for good (they stay in libSQL): the mirror keeps the i8
   * codes only. One-way: a collection that grew past the limit and shrank again stays compact
   * until the next start.
   */
  compact(): void {
    if (!this.hasFloats) return;
    this.hasFloats = false;
    this.vectors.dropFloats();
    this.dropTexts();
  }

  /** set() calls it after writing the codes. */
  setMetadata(rid: number, metadata: MetadataValue[]): void {
    this.ensure(rid);
    this.orders.touch();
    this.writeMetadata(rid, metadata);
  }

  remove(rid: number): void {
    if (this.live[rid] !== 1) return;
    this.orders.touch();
    this.live[rid] = 0;
    this.liveCount--;
    this.lent?.delete(rid);
    this.clearFields(rid);
  }

  /**
   * A copy of one row's unit vector, in its own buffer (safe for any native call). A compact
   * mirror answers its codes, scaled to unit length: the same direction to within the codes' rounding.
   */
  vectorOf(rid: number): Float32Array {
    const start = this.offsetOf(rid);
    if (this.hasFloats) return this.slabOf(rid).slice(start, start + this.dims);
    const out = Float32Array.from(this.gatherCodes([rid], 0, 1));
    normalizeInPlace(out, 0, this.dims);
    return out;
  }

  /**
   * What the index is given for a row, and searched with to find it: its codes, which the i8 index
   * keeps byte for byte, so a compact mirror can read them back (`lend`). Own buffer.
   */
  indexVectorOf(rid: number): Int8Array {
    return this.gatherCodes([rid], 0, 1).slice();
  }

  /**
   * Copies the f32 vectors of `rids[from]` and the rids after it that share its slab (at most
   * GATHER_ROWS) into a gather area; returns a view of them at byte offset 0 (rows taken =
   * length / dims). Valid until the next gather: use it synchronously.
   */
  gather(rids: ArrayLike<number>, from: number, max: number): Float32Array {
    return this.vectors.gather(rids, from, max);
  }

  /** `gather` for the i8 codes (what the index is given): a view at byte offset 0, valid until the next gather. */
  gatherCodes(rids: ArrayLike<number>, from: number, max: number): Int8Array {
    return this.lent ? this.lent.gather(rids, from, max) : this.vectors.gatherCodes(rids, from, max);
  }

  /**
   * Reads the codes of the rows `index` holds from it from now on, and keeps only the others'
   * (lent-codes.ts). Only a compact mirror; where more than an eighth of the rows would stay
   * behind (an index being rebuilt), the mirror keeps its codes instead. The generation calls it with every index
   * it serves from; answers whether the index lends them.
   */
  lend(index: CodeLender): boolean {
    if (this.lent?.index === index) return true;
    if (this.hasFloats) return this.keepCodes();
    const rids = this.liveRids();
    const next = lendFrom(index, this.dims, (rid) => this.versions[rid]!, GATHER_ROWS, rids, (from) => this.gatherCodes(rids, from, GATHER_ROWS));
    if (!next) return this.keepCodes();
    this.lent?.close();
    this.lent = next;
    this.vectors.dropCodes();
    return true;
  }

  /**
   * For a load lent from its first row (restart.ts readMirror): rows the index holds stop being
   * kept here. Where too many stay (an index file far behind the rows), the mirror takes the codes back.
   */
  settleCodes(): void {
    if (!this.lent) return;
    this.lent.settleAll();
    if (keepsTooMany(this.lent.pendingRows, this.liveCount)) this.keepCodes();
  }

  /** Takes the codes back from the index (if lent): the slabs hold them again. */
  private keepCodes(): false {
    if (!this.lent) return false;
    this.vectors.restoreCodes();
    this.lent.giveBack(this.liveRids(), (rid, codes) => this.vectors.codeSlabOf(rid).set(codes, this.offsetOf(rid)));
    this.lent = null;
    return false;
  }

  /** Rows whose codes the mirror keeps while the index lends the rest; null when it lends none. */
  get codesKept(): number | null {
    return this.lent ? this.lent.pendingRows : null;
  }

  /** Every live rid, ascending. */
  liveRids(): Uint32Array {
    const out = new Uint32Array(this.liveCount);
    let n = 0;
    for (let rid = 0; rid < this.ridEnd; rid++) if (this.live[rid] === 1) out[n++] = rid;
    return out;
  }

  /** An estimate (of the fields' strings: row-fields.ts fieldBytes). */
  bytes(): number {
    const vectors = this.vectors.bytes() + (this.lent?.bytes() ?? 0);
    return vectors + this.live.byteLength + this.versions.byteLength + this.fieldBytes() + this.orders.bytes();
  }
}
