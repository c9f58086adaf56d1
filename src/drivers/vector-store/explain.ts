// What a search reports when asked to explain itself (SearchRequest.explain; the query's
// `explain`, docs/vector-tables.md#explain). Built once the search is done, from figures the
// search keeps anyway (the plan, its estimate, the rows it examined), so a search not asked to
// explain pays nothing for it.
import { bandFor, type Plan, type PlanInput } from "./planner.ts";
import type { SearchPath } from "./types.ts";
import type { SearchExplain } from "../store-api/index.ts";

/** An empty collection (or k ≤ 0, which the API never sends): nothing planned, nothing examined. */
export function emptyExplain(): SearchExplain {
  return { estimatedMatches: 0, candidatesExamined: 0, expectedRecall: 1 };
}

/**
 * A collection still loading has no mirror, so no planner: the SQL scores every row passing the
 * filter (search.ts searchSql), `matches` counted by one more statement for explain only.
 */
export function sqlExplain(matches: number): SearchExplain {
  return { estimatedMatches: matches, candidatesExamined: matches, expectedRecall: 1 };
}

/**
 * A planned search: `selectivity` is the planner's estimate of the filter's share of the live rows
 * (null: no filter), `plan` what it planned, `path` what answered (a plan may hand over to the
 * exact path), `examined` the rows the steps taken examined (search.ts Found).
 */
export function explainSearch(input: PlanInput, selectivity: number | null, plan: Plan, path: SearchPath, examined: number): SearchExplain {
  const estimatedMatches = selectivity === null ? input.liveRows : Math.round(selectivity * input.liveRows);
  return { estimatedMatches, candidatesExamined: examined, expectedRecall: path === "hnsw" ? hnswRecall(input, selectivity, plan) : 1 };
}

/**
 * The mean recall@10 calibration.ts measured for the HNSW search the planner made, on this
 * collection's own data; null before a measurement, and where none stands for the plan taken.
 */
function hnswRecall(input: PlanInput, selectivity: number | null, plan: Plan): number | null {
  const cal = input.calibration;
  if (!cal) return null;
  if (selectivity === null) return cal.unfiltered ?? null;
  // A bounded exact read that overflowed ran the plan made for the fewest matches past its limit (planner.ts planSelective).
  const planned = plan.path === "exact-bounded" ? Math.max(selectivity, (plan.limit + 1) / input.liveRows) : selectivity;
  const band = bandFor(cal, planned);
  // No band near, or an exact band past its reach: the planner searched at depth 1, which that band did not measure.
  return band && band.choice !== "exact" ? band.recall : null;
}
