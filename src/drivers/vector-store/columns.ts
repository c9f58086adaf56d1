// The mirror's typed metadata columns, indexed by rid: numbers as f64 with a presence byte,
// booleans as one byte (-1 = null), keywords as strings, with a count of rows per value (the
// planner's exact match count for `=` and `in` filters on one keyword column) and the rows
// themselves per value (postings.ts: the exact path's matches for those filters).
import { Postings } from "./postings.ts";
import type { MetadataValue } from "./types.ts";

export interface ColumnStore {
  get(rid: number): MetadataValue;
  set(rid: number, v: MetadataValue): void;
  grow(capacity: number): void;
  bytes(): number;
  /** Rows holding `value` (keyword columns only). */
  count?(value: MetadataValue): number;
  /** The rids holding `value`, ascending (keyword columns only). */
  rids?(value: MetadataValue): Uint32Array;
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

export function keywordColumn(): ColumnStore {
  const values: (string | null)[] = [];
  const counts = new Map<string, number>();
  const postings = new Postings((rid) => values[rid] ?? null);
  let chars = 0;
  const tally = (v: string | null | undefined, by: number) => {
    if (v === null || v === undefined) return;
    const n = (counts.get(v) ?? 0) + by;
    if (n === 0) counts.delete(v);
    else counts.set(v, n);
  };
  return {
    get: (rid) => values[rid] ?? null,
    set: (rid, v) => {
      const old = values[rid] ?? null;
      const next = v === null ? null : String(v);
      if (old === next) return;
      chars += (next?.length ?? 0) - (old?.length ?? 0);
      tally(old, -1);
      values[rid] = next;
      tally(next, 1);
      if (old !== null) postings.drop(old);
      if (next !== null) postings.add(next, rid);
    },
    grow: () => {},
    bytes: () => values.length * 8 + chars * 2 + counts.size * 64 + postings.bytes(),
    count: (v) => (typeof v === "string" ? (counts.get(v) ?? 0) : 0),
    rids: (v) => (typeof v === "string" ? postings.rids(v) : new Uint32Array(0)),
  };
}
