// The mirror's typed metadata columns, indexed by rid: numbers as f64 with a presence byte,
// booleans as one byte (-1 = null), keywords as ids into a dictionary of their values, with a
// count of rows per value (the planner's exact match count for `=` and `in` filters on one keyword
// column). A keyword filter's rows are found by one pass over the ids (~0.1 ms at 100k rows), no
// SQL; column orders (column-order.ts) sort every kind by `key`.
import type { MetadataValue } from "../store-api/index.ts";

export interface ColumnStore {
  get(rid: number): MetadataValue;
  set(rid: number, v: MetadataValue): void;
  grow(capacity: number): void;
  bytes(): number;
  /** A row's value as the number a column order sorts by (column-order.ts); null for no value. None for booleans: a half of the rows is no run worth a copy of their codes. */
  key?(rid: number): number | null;
  /** A filter value's key, as `key` gives it; null when no row can hold it. */
  keyOf?(value: MetadataValue): number | null;
  /** Rows holding `value` (keyword columns only). */
  count?(value: MetadataValue): number;
  /** The rids holding one of `values`, ascending (keyword columns only). */
  rids?(values: readonly MetadataValue[]): Uint32Array;
}

export function numberColumn(capacity: number): ColumnStore {
  let values = new Float64Array(capacity);
  let present = new Uint8Array(capacity);
  return {
    get: (rid) => (present[rid] === 1 ? values[rid]! : null),
    set: (rid, v) => {
      present[rid] = v === null ? 0 : 1;
      values[rid] = v === null ? 0 : Number(v);
    },
    grow: (n) => {
      const nv = new Float64Array(n);
      nv.set(values);
      values = nv;
      const np = new Uint8Array(n);
      np.set(present);
      present = np;
    },
    bytes: () => values.byteLength + present.byteLength,
    key: (rid) => (present[rid] === 1 ? values[rid]! : null),
    keyOf: (v) => (typeof v === "number" ? v : null),
  };
}

export function booleanColumn(capacity: number): ColumnStore {
  let values = new Int8Array(capacity).fill(-1); // -1 = null
  return {
    get: (rid) => (values[rid] === -1 || values[rid] === undefined ? null : values[rid] === 1),
    set: (rid, v) => {
      values[rid] = v === null ? -1 : v ? 1 : 0;
    },
    grow: (n) => {
      const nv = new Int8Array(n).fill(-1);
      nv.set(values);
      values = nv;
    },
    bytes: () => values.byteLength,
  };
}

/**
 * A keyword column as ids into a dictionary of its values (0: no value), with a count of rows per
 * value. A value no row holds any more gives its id back for the next new value.
 */
export function keywordColumn(capacity: number): ColumnStore {
  let ids = new Uint32Array(capacity);
  const words: (string | null)[] = [null];
  const counts: number[] = [0];
  const idOf = new Map<string, number>();
  const free: number[] = [];
  let chars = 0;
  const intern = (word: string): number => {
    const known = idOf.get(word);
    if (known !== undefined) return known;
    const id = free.pop() ?? words.length;
    words[id] = word;
    counts[id] = 0;
    idOf.set(word, id);
    chars += word.length;
    return id;
  };
  const release = (id: number): void => {
    if (--counts[id]! > 0) return;
    chars -= words[id]!.length;
    idOf.delete(words[id]!);
    words[id] = null;
    free.push(id);
  };
  return {
    get: (rid) => words[ids[rid] ?? 0] ?? null,
    set: (rid, v) => {
      const old = ids[rid]!;
      const next = v === null ? 0 : intern(String(v));
      if (old === next) return;
      ids[rid] = next;
      if (next !== 0) counts[next]!++;
      if (old !== 0) release(old);
    },
    grow: (n) => {
      const grown = new Uint32Array(n);
      grown.set(ids);
      ids = grown;
    },
    bytes: () => ids.byteLength + chars * 2 + words.length * 64,
    key: (rid) => (ids[rid] ? ids[rid]! : null),
    keyOf: (v) => (typeof v === "string" ? (idOf.get(v) ?? null) : null),
    count: (v) => (typeof v === "string" ? counts[idOf.get(v) ?? 0]! : 0),
    rids: (values) => {
      const wanted = new Set<number>();
      for (const v of values) if (typeof v === "string" && idOf.has(v)) wanted.add(idOf.get(v)!);
      let total = 0;
      for (const id of wanted) total += counts[id]!;
      // The counts say how many rows to find: the pass ends at the last one.
      const out = new Uint32Array(total);
      if (total === 0) return out;
      const mask = new Uint8Array(words.length);
      for (const id of wanted) mask[id] = 1;
      for (let rid = 0, n = 0; n < total; rid++) if (mask[ids[rid]!] === 1) out[n++] = rid;
      return out;
    },
  };
}
