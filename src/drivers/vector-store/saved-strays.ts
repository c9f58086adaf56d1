// A checkpoint description's stray list (checkpoint.ts): the index's strays (strays.ts) and the
// rows not yet searched for (sweeper.ts), saved beside the file so that a load serves them at once
// and, when the list is whole, checks only the rows it adds instead of sweeping every row. Here:
// what the list holds, how many rows it may list, and which.
import { searchBreadth } from "./planner.ts";
import type { IndexParams } from "./types.ts";

/**
 * Rows a description lists: strays and rows not yet searched for (a fill's), up to this many.
 * A list cut short is not whole, and a restart then sweeps every row.
 */
const MAX_SAVED_STRAYS = 100_000;
/**
 * A swept index lists its strays whole up to this share of its rows, if past MAX_SAVED_STRAYS.
 * Strays grow with the graph (0.64 % of 1M × 768, 1.8 % of 2M × 384): at 10M × 384 (~2 %) a fixed
 * 100,000 would be cut short, and every restart would sweep 10M rows (~2 h of a core, recall
 * ~0.89 meanwhile) to find them again. Past 5 % the graph is worth rebuilding, not listing.
 */
const SAVED_STRAYS_SHARE = 0.05;

/** How many rows a description lists: more once a sweep has made the stray list whole. */
export function savedStraysCap(rows: number, checkedAll: boolean): number {
  return checkedAll ? Math.max(MAX_SAVED_STRAYS, Math.ceil(rows * SAVED_STRAYS_SHARE)) : MAX_SAVED_STRAYS;
}

/** A description's stray list (strays.ts): a hint, so a load serves the strays at once. */
export interface SavedStrays {
  /** The index's strays and its rows not yet searched for (a fill's), up to savedStraysCap. */
  rows: number[];
  /**
   * `rows` is every stray of the file: each row had been checked when it was saved (no sweep owed,
   * none left off the list). A load then checks only the rows it adds, instead of sweeping all
   * (1M × 768: 13 min of CPU after every start).
   */
  whole: boolean;
  /** The last full sweep's duration (ms): the sweep budget's unit after a load (strays.ts). */
  sweepMs: number;
  /**
   * The depth unfiltered searches ran at when saved (planner.ts searchBreadth), the depth the rows
   * were checked at. A row a search at that depth reached may be missed by a shallower one, so a
   * list checked deeper than searches now run is not whole (checkpoint.ts strayListFits).
   */
  depth: number;
}

/** What the generation knows of its strays when it saves (strays.ts StraySweeper). */
export interface StrayState {
  checkedAll: boolean;
  sweepMs: number;
  /** Rows off the stray list not yet searched for (sweeper.ts): saved as strays, so a restart scores them exactly. */
  unverifiedRows: readonly number[];
}

/** The stray list of `index` as it stands, with what the generation knows of it. */
export function savedStrays(index: { strays: ReadonlySet<number>; liveSize: number; params: IndexParams }, strays: StrayState): SavedStrays {
  // Rows not yet searched for may be strays: listed, a restart scores them exactly until its sweep.
  const cap = savedStraysCap(index.liveSize, strays.checkedAll);
  const rows = firstDistinct(index.strays, strays.unverifiedRows, cap + 1);
  const whole = strays.checkedAll && rows.length <= cap;
  rows.length = Math.min(rows.length, cap); // in place: a copy of 100,000 held the loop 3-8 ms
  return { rows, whole, sweepMs: Math.round(strays.sweepMs), depth: searchBreadth(index.liveSize, index.params.expansionSearch) };
}

/**
 * The first `max` distinct rids of `a`, then of `b`. A fill's rows wait unverified for the sweep
 * after it (sweeper.ts), a million of them by the end of a 1M-row fill, the same row once per
 * write. `b`'s are told apart by marks indexed by rid (rids are small and dense): their union in
 * a Set held the event loop 11-37 ms at each checkpoint of a 200k-row fill, the longest holds a
 * query met there (`bench pipeline --profile-json`, scripts/bench/holds.ts).
 */
function firstDistinct(a: ReadonlySet<number>, b: readonly number[], max: number): number[] {
  const out: number[] = [];
  for (const rid of a) {
    if (out.length >= max) return out;
    out.push(rid);
  }
  let top = 0;
  for (const rid of b) if (rid > top) top = rid;
  const seen = new Uint8Array(top + 1);
  for (const rid of b) {
    if (out.length >= max) break;
    if (seen[rid] === 1 || a.has(rid)) continue;
    seen[rid] = 1;
    out.push(rid);
  }
  return out;
}

/** Does a description read from disk hold a stray list of this shape? */
export function readableStrays(s: SavedStrays | undefined): boolean {
  return typeof s === "object" && s !== null && Array.isArray(s.rows) && typeof s.whole === "boolean" && typeof s.sweepMs === "number" && typeof s.depth === "number";
}
