// A column order: one metadata column's live rows in value order, with their i8 codes in that
// order, for the exact path of a filter on that column. A keyword `=` / `in` is one run of the
// order per value, a numeric range (`<`, `>=`, both, `=`) one run; each is found by two binary
// searches and scanned where it lies, with no gather. Gathering a 5 % filter's 5,000 scattered rows
// at 100k × 512 cost 0.70 ms against 0.19 ms for the same native scan over contiguous codes; through
// HNSW such a filter asks for 320 candidates (~0.5 ms, recall < 1).
//
// One invalidation rule: an order holds for the mirror state it was made from (`changes`, which
// counts every change to any row: a vector, a value, a removal), and is made again, inside a
// search, once writes have paused (`quietMs`, and 100 times as long as that column's last making,
// so that a table written every few seconds does not pay it after each write). While a table is being
// written its filters take the paths without an order: a keyword's rows from its column
// (columns.ts), any other filter's through SQL.

import type { FilterNode, MetadataValue } from "../store-api/index.ts";
import type { ColumnStore } from "./columns.ts";

/** Rows per buffer of codes: a run's inner buffers are scanned in place, its two ends copied. */
export const ORDER_CHUNK_ROWS = 2048;

/** Bytes of orders one generation keeps: two columns at 100k × 384 (40 MB each). */
export const ORDER_BYTES = 128 * 2 ** 20;

/** Writes must have paused this long before an order is made again (a ~30 ms step at 100k × 384). */
export const ORDER_QUIET_MS = 1000;

/** Making orders takes at most ~1 % of the time: the wait after writes is 100 × the last making. */
const BUILD_SHARE = 100;

export interface ColumnOrder {
  /** The mirror's change count when it was made: it holds while that is unchanged. */
  changes: number;
  /** Ascending column keys (columns.ts `key`: the number, or a keyword's id); rows without a value are left out. */
  keys: Float64Array;
  /** The rid of each key; ties in rid order. */
  rids: Uint32Array;
  /** The codes of rows [c × ORDER_CHUNK_ROWS, (c + 1) × ORDER_CHUNK_ROWS), each in its own buffer. */
  chunks: Int8Array[];
  /** Where a run's partial chunk is copied for its scan: one chunk's size, reused (a fresh buffer per search cost more than the scan). */
  scratch: Int8Array;
}

/** [from, to) of an order's rows. */
export interface Run {
  from: number;
  to: number;
}

/** An interval of one column's keys. */
export interface Span {
  lo: number;
  loOpen: boolean;
  hi: number;
  hiOpen: boolean;
}

export function orderBytes(rows: number, dims: number): number {
  return rows * (dims + 12) + ORDER_CHUNK_ROWS * dims;
}

const ALL: Span = { lo: -Infinity, loOpen: false, hi: Infinity, hiOpen: false };
const point = (k: number): Span => ({ lo: k, loOpen: false, hi: k, hiOpen: false });

/**
 * The spans of column keys a filter selects, when it is an `=` or `in` on one column, or a
 * numeric range (`lt`, `lte`, `gt`, `gte`, or an `and` of them on one column); else null.
 * `keyOf`: a filter value's key on that column (null: no row holds it).
 */
export function spansOf(node: FilterNode, keyOf: (column: number, value: MetadataValue) => number | null): { column: number; spans: Span[] } | null {
  if (node.kind === "set" && node.op === "in") {
    const keys = node.values.map((v) => keyOf(node.column, v)).filter((k): k is number => k !== null);
    return { column: node.column, spans: [...new Set(keys)].map(point) };
  }
  if (node.kind === "cmp" && node.op === "eq") {
    const key = keyOf(node.column, node.value);
    return { column: node.column, spans: key === null ? [] : [point(key)] };
  }
  const range = rangeOf(node);
  return range && { column: range.column, spans: [range.span] };
}

function rangeOf(node: FilterNode): { column: number; span: Span } | null {
  if (node.kind === "cmp") {
    const v = node.value;
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    const op = node.op;
    if (op === "lt" || op === "lte") return { column: node.column, span: { ...ALL, hi: v, hiOpen: op === "lt" } };
    if (op === "gt" || op === "gte") return { column: node.column, span: { ...ALL, lo: v, loOpen: op === "gt" } };
    return op === "eq" ? { column: node.column, span: point(v) } : null;
  }
  if (node.kind !== "and" || node.items.length === 0) return null;
  let out: { column: number; span: Span } | null = null;
  for (const item of node.items) {
    const next = rangeOf(item);
    if (!next || (out && next.column !== out.column)) return null;
    if (!out) out = next;
    else {
      const [a, b] = [out.span, next.span];
      if (b.lo > a.lo || (b.lo === a.lo && b.loOpen)) [a.lo, a.loOpen] = [b.lo, b.loOpen];
      if (b.hi < a.hi || (b.hi === a.hi && b.hiOpen)) [a.hi, a.hiOpen] = [b.hi, b.hiOpen];
    }
  }
  return out;
}

/** The run of `keys` (ascending) inside `span`. */
export function runOf(keys: Float64Array, span: Span): Run {
  const from = firstWhere(keys, (v) => (span.loOpen ? v > span.lo : v >= span.lo));
  const to = firstWhere(keys, (v) => (span.hiOpen ? v >= span.hi : v > span.hi));
  return { from, to: Math.max(from, to) };
}

/** The first index where the monotone test `past` turns true (keys.length when never). */
function firstWhere(keys: Float64Array, past: (v: number) => boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(keys[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The codes of rows [start, …) of the order, as far as the chunk holding that row and `to` allow:
 * the chunk itself when the run covers it whole, else the part of it copied to the order's scratch
 * (valid until the next call; a view at byte offset 0, as usearch needs).
 */
export function codesFrom(order: ColumnOrder, dims: number, start: number, to: number): Int8Array {
  const c = Math.floor(start / ORDER_CHUNK_ROWS);
  const chunkStart = c * ORDER_CHUNK_ROWS;
  const end = Math.min(to, chunkStart + ORDER_CHUNK_ROWS);
  const chunk = order.chunks[c]!;
  if (start === chunkStart && (end - chunkStart) * dims === chunk.length) return chunk;
  const part = order.scratch.subarray(0, (end - start) * dims);
  part.set(chunk.subarray((start - chunkStart) * dims, (end - chunkStart) * dims));
  return part;
}

/** The rows orders are made from (mirror.ts). */
export interface OrderSource {
  readonly dims: number;
  readonly ridEnd: number;
  readonly liveCount: number;
  isLive(rid: number): boolean;
  /** Copies the codes of rids[from] and some rows after it into a scratch view (mirror.ts gatherCodes). */
  gatherCodes(rids: ArrayLike<number>, from: number, max: number): Int8Array;
}

/** The codes of `rids`, row after row, in a buffer of their own (orders, the strays' copy: stray-scan.ts). */
export function codesOf(source: Pick<OrderSource, "dims" | "gatherCodes">, rids: ArrayLike<number>): Int8Array<ArrayBuffer> {
  const codes = new Int8Array(rids.length * source.dims);
  for (let i = 0; i < rids.length; ) {
    const part = source.gatherCodes(rids, i, ORDER_CHUNK_ROWS);
    codes.set(part, i * source.dims);
    i += part.length / source.dims;
  }
  return codes;
}

/** The live rows with a key in column `key`, in key order (ties by rid), and their codes. */
export function makeOrder(source: OrderSource, key: (rid: number) => number | null, changes: number): ColumnOrder {
  const found = new Uint32Array(source.liveCount);
  const foundKeys = new Float64Array(source.liveCount);
  let n = 0;
  for (let rid = 0; rid < source.ridEnd && n < found.length; rid++) {
    const k = source.isLive(rid) ? key(rid) : null;
    if (k === null) continue;
    found[n] = rid;
    foundKeys[n++] = k;
  }
  // Each key's rank among the distinct keys, then a counting sort by rank: stable, so ties keep
  // rid order. A comparator sort of 100k rows held the loop ~10 times as long.
  const distinct = foundKeys.slice(0, n).sort();
  let u = 0;
  for (let i = 0; i < n; i++) if (i === 0 || distinct[i] !== distinct[u - 1]) distinct[u++] = distinct[i]!;
  const starts = new Uint32Array(u + 1);
  const ranks = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    // The first distinct key ≥ this one (it is there): inline, a closure a row cost more.
    const k = foundKeys[i]!;
    let lo = 0;
    let hi = u;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid]! < k) lo = mid + 1;
      else hi = mid;
    }
    ranks[i] = lo;
    starts[lo + 1]!++;
  }
  for (let r = 0; r < u; r++) starts[r + 1]! += starts[r]!;
  const rids = new Uint32Array(n);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const at = starts[ranks[i]!]!++;
    rids[at] = found[i]!;
    keys[at] = foundKeys[i]!;
  }
  const chunks: Int8Array[] = [];
  for (let start = 0; start < n; start += ORDER_CHUNK_ROWS) chunks.push(codesOf(source, rids.subarray(start, start + ORDER_CHUNK_ROWS)));
  return { changes, keys, rids, chunks, scratch: new Int8Array(ORDER_CHUNK_ROWS * source.dims) };
}

/** A generation's column orders, made on demand, within ORDER_BYTES, least recently used dropped first. */
export class ColumnOrders {
  private readonly orders = new Map<number, ColumnOrder>();
  /** Counts every change to a row; `changedAt` the last one's time. */
  private changes = 0;
  private changedAt = 0;
  /** How long each column's last order took to make (ms): the wait before its next grows with it. */
  private readonly buildMs = new Map<number, number>();

  constructor(
    private readonly source: OrderSource,
    private readonly column: (c: number) => ColumnStore,
    private readonly now: () => number,
    private readonly quietMs = ORDER_QUIET_MS,
    private readonly budget = ORDER_BYTES,
  ) {}

  /** A row changed (its vector, a value, its presence): no order holds the truth any more. */
  touch(): void {
    this.changes++;
    this.changedAt = this.now();
  }

  /** The order of column `c`: the current one; else a new one when writes have paused and it fits; else null (and for a boolean column). */
  get(c: number): ColumnOrder | null {
    const found = this.orders.get(c);
    if (found?.changes === this.changes) {
      this.orders.delete(c);
      this.orders.set(c, found);
      return found;
    }
    this.orders.delete(c);
    const key = this.column(c).key;
    const started = this.now();
    const size = orderBytes(this.source.liveCount, this.source.dims);
    if (!key || started - this.changedAt < this.quiet(c) || size > this.budget) return null;
    const order = makeOrder(this.source, key, this.changes);
    this.buildMs.set(c, this.now() - started);
    let used = this.bytes();
    for (const [other, old] of this.orders) {
      if (used + size <= this.budget) break;
      this.orders.delete(other);
      used -= orderBytes(old.rids.length, this.source.dims);
    }
    this.orders.set(c, order);
    return order;
  }

  /** Does `order` still hold the rows as they are (no change since it was made)? */
  isCurrent(order: ColumnOrder): boolean {
    return order.changes === this.changes;
  }

  bytes(): number {
    let sum = 0;
    for (const order of this.orders.values()) sum += orderBytes(order.rids.length, this.source.dims);
    return sum;
  }

  /**
   * `quietMs`, and at least BUILD_SHARE times column `c`'s last making; 0 (tests): no wait. Per
   * column: one column's making must not hold off another's first (a keyword filter waited 5 s
   * after a restart because a range's order had taken 50 ms).
   */
  private quiet(c: number): number {
    return this.quietMs === 0 ? 0 : Math.max(this.quietMs, BUILD_SHARE * (this.buildMs.get(c) ?? 0));
  }
}
