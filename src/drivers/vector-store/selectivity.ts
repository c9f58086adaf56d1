// How many rows a filter matches, the number the planner (planner.ts) routes by: counted exactly
// when the filter is one `=` or `in` on a keyword column (the mirror counts rows per keyword
// value), else estimated from a stride sample of the mirror, a closer one near the exact/HNSW
// boundary m* (planner.ts exactCap), where a wrong estimate sends a search down the costlier path.
// Neither reads a vector or SQL.
import type { FilterNode, Predicate, Scalar } from "../store-api/index.ts";
import type { Mirror } from "./mirror.ts";

/** A first, cheap sample (~4 µs): enough when the filter is far from m* either way. */
const QUICK_SAMPLE_ROWS = 256;
/** Near m* (within ×4) a closer look (~15 µs): ±18 % at m* on 100k rows. */
const SAMPLE_ROWS = 1024;
const NEAR_CAP = 4;

/**
 * The exact match count of a filter that is one `=` or `in` on a keyword column (the mirror counts
 * rows per keyword value); null for any other filter, whose count is sampled. A sample of 1,024
 * rows is ±18 % near the exact/HNSW boundary, so a 5 % keyword filter at 100k rows (5,000
 * matches against a boundary of 4,000) went one way or the other query by query.
 */
export function knownMatches(node: FilterNode, mirror: Mirror): number | null {
  const one = valuesOf(node);
  if (!one) return null;
  let sum = 0;
  for (const value of one.values) {
    const n = mirror.keywordCount(one.column, value);
    if (n === null) return null;
    sum += n;
  }
  return sum;
}

/** A filter that is one `=` or `in` on a column: that column and its distinct values; else null. */
export function valuesOf(node: FilterNode): { column: number; values: Scalar[] } | null {
  if (node.kind === "cmp" && node.op === "eq") return { column: node.column, values: [node.value] };
  if (node.kind === "set" && node.op === "in") return { column: node.column, values: [...new Set(node.values)] };
  return null;
}

/** Fraction of live rows matching `pred`: a quick stride sample, a closer one when near `cap`. */
export function estimateSelectivity(pred: Predicate<number>, mirror: Mirror, cap = 0): number {
  const quick = sampleSelectivity(pred, mirror, QUICK_SAMPLE_ROWS);
  const matches = quick * mirror.liveCount;
  return matches > cap / NEAR_CAP && matches < cap * NEAR_CAP ? sampleSelectivity(pred, mirror, SAMPLE_ROWS) : quick;
}

/** Fraction of live rows matching `pred` among about `rows` rows at a fixed stride. */
function sampleSelectivity(pred: Predicate<number>, mirror: Mirror, rows: number): number {
  const step = Math.max(1, Math.floor(mirror.ridEnd / rows));
  let seen = 0;
  let hits = 0;
  for (let rid = step >> 1; rid < mirror.ridEnd && seen < rows * 2; rid += step) {
    if (!mirror.isLive(rid)) continue;
    seen++;
    if (pred(rid)) hits++;
  }
  return seen === 0 ? 1 : hits / seen;
}
