// The query's `explain` (docs/vector-tables.md#explain): the path the storage took and its
// figures, beside the wall times the service measured. The managed store reports its own figures
// (vector-store/explain.ts); a platform store's planner is the database's, whose estimates and
// recall vecsync does not see, so those figures are null there (its path is `platform`, or
// `keyword`/`hybrid` for a query with that mode on a Postgres platform table).
import type { SearchExplain } from "../../drivers/store-api/index.ts";
import type { QueryExplain } from "./schemas.ts";

/** What a pinned search answered (vector-tables/storage.ts TablePin), as far as explain reads it. */
type Searched = { path: string; explain?: SearchExplain };

/** Milliseconds to the microsecond: finer is noise from the timer and the event loop. */
const ms = (value: number) => Math.round(value * 1000) / 1000;

/**
 * `embeddingMs`: the provider call embedding the query (null for a built-in model, which the
 * warehouse embeds inside the searching statement: its time is in `searchMs`).
 */
export function queryExplain(mode: "managed" | "platform", found: Searched, embeddingMs: number | null, searchMs: number): QueryExplain {
  const times = { embedding_ms: embeddingMs === null ? null : ms(embeddingMs), search_ms: ms(searchMs) };
  if (mode === "platform") {
    // A query mode names its path as on managed storage; the figures stay the database's own.
    const path = found.path === "keyword" || found.path === "hybrid" ? found.path : "platform";
    return { path, estimated_matches: null, candidates_examined: null, expected_recall: null, ...times };
  }
  const figures = found.explain;
  return {
    // The managed store's paths: `hnsw`, `keyword`, `hybrid`, or an exact one (`exact-memory`, `exact-sql` while a collection loads, `empty`).
    path: found.path === "hnsw" || found.path === "keyword" || found.path === "hybrid" ? found.path : "exact",
    estimated_matches: figures?.estimatedMatches ?? null,
    candidates_examined: figures?.candidatesExamined ?? null,
    expected_recall: figures?.expectedRecall ?? null,
    ...times,
  };
}
