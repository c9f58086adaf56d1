// A search with a query `mode` (docs/vector-tables.md#query-modes): `vector` is the cosine search
// with the keyword scores added; `keyword` ranks by BM25 (keyword-search.ts); `hybrid` fuses the
// two rankings by weighted reciprocal rank:
//   rank_score = w / (60 + rank_vector) + (1 − w) / (60 + rank_keyword)
// ranks from 1 within each side's top HYBRID_DEPTH(k) rows, a row absent from a side adding nothing
// for it. Every hit carries its cosine, its BM25 (null when no word matched) and its rank score.
import type { Client } from "@libsql/client";
import { comparePk } from "../../shared/pk-order.ts";
import type { FilterNode } from "./filters/index.ts";
import { matchExpression } from "./keyword-index.ts";
import { countKeywordMatches, keywordRanking, keywordScoresOf } from "./keyword-search.ts";
import { queryVector, searchGeneration, type SearchTarget } from "./search.ts";
import type { SearchExplain, SearchHit, SearchRequest, SearchResult } from "./types.ts";

/** Reciprocal rank fusion's constant, as CONTRACT 11 fixes it. */
export const RRF_K = 60;

/**
 * The vector ranking's weight when a hybrid query names none. Provisional: an even split until
 * the hybrid benchmark measures a better one (docs/vector-tables.md#query-modes).
 */
export const DEFAULT_VECTOR_WEIGHT = 0.5;

/**
 * Rows taken from each side for the fusion: four times the results asked for, at least 100. A row
 * past it on a side gets nothing from that side (it is "absent from the ranking"); the depth
 * bounds the work: one cosine search of `depth` rows, one BM25 read of about as many.
 */
export function hybridDepth(k: number): number {
  return Math.max(4 * k, 100);
}

export async function searchWithMode(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, capScale?: number): Promise<SearchResult> {
  const match = matchExpression(req.text ?? "");
  if (req.mode === "keyword") return keywordOnly(client, gen, req, node, match);
  if (req.mode === "hybrid") return hybrid(client, gen, req, node, match, capScale);
  const found = await searchGeneration(client, gen, { ...req, mode: undefined }, node, capScale);
  const scores = await keywordScoresOf(client, gen, match, found.hits.map((h) => h.pk));
  return { ...found, hits: found.hits.map((h) => ({ ...h, keywordScore: scores.get(h.pk) ?? null, rankScore: h.score })) };
}

async function keywordOnly(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, match: string | null): Promise<SearchResult> {
  const query = queryVector(req, gen.spec.dimensions);
  const ranked = await keywordRanking(client, gen, query, match, req.k, node, req.minScore ?? null);
  const hits = ranked.hits.map((h) => ({ ...h, rankScore: h.keywordScore }));
  if (!req.explain) return { hits, path: "keyword" };
  const explain: SearchExplain = { estimatedMatches: await countKeywordMatches(client, gen, match, node), candidatesExamined: ranked.examined, expectedRecall: 1 };
  return { hits, path: "keyword", explain };
}

interface Fused {
  hit: SearchHit;
  rankScore: number;
  keywordScore: number | null;
}

async function hybrid(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, match: string | null, capScale?: number): Promise<SearchResult> {
  const w = req.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
  const depth = hybridDepth(req.k);
  const vectorSide = await searchGeneration(client, gen, { ...req, k: depth, mode: undefined }, node, capScale);
  const keywordSide = await keywordRanking(client, gen, queryVector(req, gen.spec.dimensions), match, depth, node, req.minScore ?? null);
  const fused = new Map<string, Fused>();
  vectorSide.hits.forEach((hit, i) => fused.set(hit.pk, { hit, rankScore: w / (RRF_K + i + 1), keywordScore: null }));
  keywordSide.hits.forEach((hit, i) => {
    const add = (1 - w) / (RRF_K + i + 1);
    const seen = fused.get(hit.pk);
    // A row on both sides keeps the vector side's cosine, as a `vector` search reports it.
    if (seen) Object.assign(seen, { rankScore: seen.rankScore + add, keywordScore: hit.keywordScore });
    else fused.set(hit.pk, { hit, rankScore: add, keywordScore: hit.keywordScore });
  });
  // Rows the vector side found whose words match past the keyword side's depth still get their BM25.
  const unscored = vectorSide.hits.filter((h) => fused.get(h.pk)!.keywordScore === null).map((h) => h.pk);
  const late = await keywordScoresOf(client, gen, match, unscored);
  const byPk = comparePk(gen.spec.numericPk);
  const ordered = [...fused.values()].sort((a, b) => b.rankScore - a.rankScore || byPk(a.hit.pk, b.hit.pk)).slice(0, req.k);
  const hits = ordered.map((f) => ({
    pk: f.hit.pk,
    score: f.hit.score,
    metadata: f.hit.metadata,
    text: f.hit.text,
    keywordScore: f.keywordScore ?? late.get(f.hit.pk) ?? null,
    rankScore: f.rankScore,
  }));
  if (!req.explain) return { hits, path: "hybrid" };
  const v = vectorSide.explain;
  const explain: SearchExplain = {
    estimatedMatches: v?.estimatedMatches ?? 0,
    candidatesExamined: (v?.candidatesExamined ?? 0) + keywordSide.examined,
    expectedRecall: v?.expectedRecall ?? null,
  };
  return { hits, path: "hybrid", explain };
}
