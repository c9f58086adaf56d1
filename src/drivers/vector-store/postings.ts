// Per-value rid lists of a keyword column: the exact path's matches for `=` and `in` filters
// read from memory instead of through libSQL's metadata index. A 5 % keyword filter on 100k rows
// read its 5,000 rids through SQL (group_concat over the index) on every query, the largest cost
// of such a query over HTTP (bench http). 4 B a row per keyword column.
//
// Lists are append-only with lazy removal: a row leaving a value leaves a stale entry behind, and
// the list is rebuilt (the column's current values decide, sorted, each rid once) when it is next
// read, or when stale entries outnumber the live ones. A list with no stale entry and appended in
// rid order (a backfill, a reload) is read as it is.

interface List {
  rids: Uint32Array;
  length: number;
  /** Entries whose row left this value since the last rebuild (a re-joined row may count twice). */
  stale: number;
  /** Every entry appended after a smaller rid. */
  ascending: boolean;
}

export class Postings {
  private readonly lists = new Map<string, List>();

  /** `valueOf(rid)`: the column's current value of a row (null for none or a removed row). */
  constructor(private readonly valueOf: (rid: number) => string | null) {}

  /** `rid` now holds `value`. */
  add(value: string, rid: number): void {
    let list = this.lists.get(value);
    if (!list) this.lists.set(value, (list = { rids: new Uint32Array(16), length: 0, stale: 0, ascending: true }));
    if (list.length === list.rids.length) {
      const grown = new Uint32Array(list.rids.length * 2);
      grown.set(list.rids);
      list.rids = grown;
    }
    if (list.length > 0 && rid <= list.rids[list.length - 1]!) list.ascending = false;
    list.rids[list.length++] = rid;
  }

  /** A row that held `value` no longer does. */
  drop(value: string): void {
    const list = this.lists.get(value);
    if (!list) return;
    list.stale++;
    // Bounded memory under churn: never more than about twice the live entries.
    if (list.stale > 64 && list.stale * 2 > list.length) this.rebuild(value, list);
  }

  /** The rids holding `value`, ascending, each once (a copy). */
  rids(value: string): Uint32Array {
    const list = this.lists.get(value);
    if (!list) return new Uint32Array(0);
    if (list.stale > 0 || !list.ascending) this.rebuild(value, list);
    return list.rids.slice(0, list.length);
  }

  bytes(): number {
    let sum = 0;
    for (const list of this.lists.values()) sum += list.rids.byteLength + 64;
    return sum;
  }

  private rebuild(value: string, list: List): void {
    const kept = list.rids.subarray(0, list.length).filter((rid) => this.valueOf(rid) === value);
    kept.sort();
    let n = 0;
    for (let i = 0; i < kept.length; i++) if (i === 0 || kept[i] !== kept[i - 1]) kept[n++] = kept[i]!;
    list.rids = kept.length > 2 * n ? kept.slice(0, n) : kept;
    list.length = n;
    if (n === 0) this.lists.delete(value);
    list.stale = 0;
    list.ascending = true;
  }
}
