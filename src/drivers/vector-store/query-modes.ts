// A search with a query `mode` (docs/vector-tables.md#query-modes): `vector` is the cosine search
// with the keyword scores added; `keyword` ranks by BM25 (keyword-search.ts); `hybrid` fuses the
// two rankings by weighted reciprocal rank (fusion.ts, shared with the Postgres platform store).
// Every hit carries its cosine, its BM25 (null when no word matched) and its rank score.
import type { Client } from "@libsql/client";
import { DEFAULT_VECTOR_WEIGHT, type FilterNode, fuseRankings, hybridDepth, type SearchExplain, type SearchRequest, unscored, withLateScores } from "../store-api/index.ts";
import { type KeywordQuery, keywordQuery } from "./keyword-index.ts";
import type { KeywordRanking } from "./keyword-memory.ts";
import { countKeywordMatches, keywordRanking, keywordScoresOf } from "./keyword-search.ts";
import { queryVector, searchGeneration, type SearchTarget } from "./search.ts";
import type { SearchResult } from "./types.ts";


export async function searchWithMode(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, capScale?: number): Promise<SearchResult> {
  const words = keywordQuery(req.text ?? "");
  if (req.mode === "keyword") return keywordOnly(client, gen, req, node, words);
  if (req.mode === "hybrid") return hybrid(client, gen, req, node, words, capScale);
  const found = await searchGeneration(client, gen, { ...req, mode: undefined }, node, capScale);
  const scores = await keywordScoresOf(client, gen, words, found.hits);
  return { ...found, hits: found.hits.map((h) => ({ ...h, keywordScore: scores.get(h.pk) ?? null, rankScore: h.score })) };
}

async function keywordOnly(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, words: KeywordQuery): Promise<SearchResult> {
  const query = queryVector(req, gen.spec.dimensions);
  const ranked = await keywordRanking(client, gen, query, words, req.k, node, req.minScore ?? null);
  const hits = ranked.hits.map((h) => ({ ...h, rankScore: h.keywordScore }));
  if (!req.explain) return { hits, path: "keyword" };
  const explain: SearchExplain = { estimatedMatches: await countKeywordMatches(client, gen, words, node), candidatesExamined: ranked.examined, expectedRecall: 1 };
  return { hits, path: "keyword", explain };
}

async function hybrid(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, words: KeywordQuery, capScale?: number): Promise<SearchResult> {
  const w = req.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
  const depth = hybridDepth(req.k);
  const rankWords = () => keywordRanking(client, gen, queryVector(req, gen.spec.dimensions), words, depth, node, req.minScore ?? null);
  // The keyword side is ranked while the graph searches, when it does (search.ts `meanwhile`): in
  // memory the ranking is synchronous up to its text read, so it runs on the loop as the graph
  // search runs on a helper thread, and the query costs about the longer of the two.
  let ranking: Promise<KeywordRanking> | null = null;
  const vectorSide = await searchGeneration(client, gen, { ...req, k: depth, exactTop: req.k, mode: undefined }, node, capScale, () => {
    ranking = rankWords();
    ranking.catch(() => {}); // awaited below; a vector side that throws first leaves it unheard
  });
  const keywordSide = await (ranking ?? rankWords());
  const fused = fuseRankings(vectorSide.hits, keywordSide.hits, w, req.k, gen.spec.numericPk);
  const hits = withLateScores(fused, await keywordScoresOf(client, gen, words, unscored(fused)));
  if (!req.explain) return { hits, path: "hybrid" };
  const v = vectorSide.explain;
  const explain: SearchExplain = {
    estimatedMatches: v?.estimatedMatches ?? 0,
    candidatesExamined: (v?.candidatesExamined ?? 0) + keywordSide.examined,
    expectedRecall: v?.expectedRecall ?? null,
  };
  return { hits, path: "hybrid", explain };
}
