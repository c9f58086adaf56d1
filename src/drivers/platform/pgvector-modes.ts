// A search of a pgvector platform table with a query `mode` (docs/vector-tables.md#query-modes), as
// the managed store answers it (vector-store/query-modes.ts): `vector` is the cosine search with
// each hit's BM25 added; `keyword` ranks by BM25 (pgvector-keyword-search.ts); `hybrid` fuses the
// cosine ranking (the store's own vector search, pgvector-query.ts) and the BM25 ranking, each
// `hybridDepth(k)` deep, by the stores' one fusion (store-api/fusion.ts).
import { DEFAULT_VECTOR_WEIGHT, fuseRankings, hybridDepth, parseFilter, queryWords, unscored, withLateScores, type SearchRequest } from "../store-api/index.ts";
import { KeywordSql, keywordRanking, keywordScores } from "./pgvector-keyword-search.ts";
import { vectorText } from "./pgvector-rows.ts";
import { noGeneration, resolve, type WithFamily } from "./pgvector-family.ts";
import type { TableComment } from "./pgvector-schema.ts";
import { type PlatformSearchResult, type PlatformTarget, UnsupportedModeError } from "./types.ts";

type Rows = Record<string, unknown>[];

/** What a mode search needs of the store. */
export interface ModeSearch {
  /** The store's cosine search of the live generation (no mode). */
  vector(req: SearchRequest): Promise<PlatformSearchResult>;
  /** `fn` on the live generation's table, in one transaction; generation_not_found when it is not the one pinned. */
  onLive<T>(fn: (run: (sql: string) => Promise<Rows>, table: string, live: TableComment) => Promise<T>): Promise<T>;
}

/**
 * `onLive` of the store: under the ref's shared lock (a swap waits for it), on the live table,
 * checked to be the generation the caller pinned.
 */
export function onLiveTable(ref: string, target: PlatformTarget, withFamily: WithFamily): ModeSearch["onLive"] {
  return (fn) =>
    withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, {});
      if (target.generation !== undefined && target.generation !== comment.generation) throw noGeneration(ref, target.generation);
      // No JIT: the planner's guess for the per-row BM25 subquery on a table it has no statistics of
      // passes jit_above_cost, and compiling took ~1 s for a search that runs in milliseconds.
      await tx.unsafe("SELECT set_config('jit', 'off', true)");
      return fn((statement) => tx.unsafe(statement), table, comment);
    });
}

/** Said for keyword and hybrid on a table made before keyword search; what to do comes with it. */
export const LEGACY_TABLE =
  "this platform table was made before keyword search and has no keyword columns yet; the next sync pass or backfill (POST /v1/vector-tables/{id}/backfill) adds them, then mode keyword and hybrid answer";

export async function searchWithMode(store: ModeSearch, req: SearchRequest): Promise<PlatformSearchResult> {
  const terms = [...queryWords(req.text ?? "").keys()];
  const k = Math.floor(req.k);
  const minScore = req.minScore ?? null;
  const keywordSql = (table: string, live: TableComment) => new KeywordSql(table, live, terms, vectorText(req.vector, live.spec.dimensions, "(query)"), parseFilter(req.filter, live.spec.metadata));

  if (req.mode === "vector" || req.mode === undefined) {
    const found = await store.vector(req);
    const pks = found.hits.map((h) => h.pk);
    // A table from before keyword search answers the vector mode with null keyword scores.
    const scores =
      terms.length === 0 || pks.length === 0
        ? new Map<string, number>()
        : await store.onLive(async (run, table, live) => (live.keyword ? keywordScores(run, keywordSql(table, live), pks) : new Map<string, number>()));
    return { ...found, hits: found.hits.map((h) => ({ ...h, keywordScore: scores.get(h.pk) ?? null, rankScore: h.score })) };
  }

  const ranked = (want: number) =>
    store.onLive(async (run, table, live) => {
      if (!live.keyword) throw new UnsupportedModeError(req.mode!, LEGACY_TABLE);
      const hits = terms.length === 0 ? [] : await keywordRanking(run, keywordSql(table, live), want, minScore, live.spec.numericPk);
      return { hits, numericPk: live.spec.numericPk };
    });

  if (req.mode === "keyword") {
    const { hits } = await ranked(k);
    return { hits: hits.map((h) => ({ ...h, rankScore: h.keywordScore })), path: "keyword" };
  }

  const depth = hybridDepth(k);
  const keywordSide = await ranked(depth);
  const vectorSide = await store.vector({ ...req, k: depth });
  const fused = fuseRankings(vectorSide.hits, keywordSide.hits, req.vectorWeight ?? DEFAULT_VECTOR_WEIGHT, k, keywordSide.numericPk);
  const pks = unscored(fused).map((h) => h.pk);
  const late = terms.length === 0 || pks.length === 0 ? new Map<string, number>() : await store.onLive((run, table, live) => keywordScores(run, keywordSql(table, live), pks));
  return { hits: withLateScores(fused, late), path: "hybrid" };
}
