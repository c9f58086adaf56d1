// Weighted reciprocal rank fusion (CONTRACT 11, docs/vector-tables.md#query-modes), pure, so the
// managed store (query-modes.ts) and the Postgres platform store (platform/pgvector-keyword-search.ts)
// fuse their two rankings by the same code:
//   rank_score = w / (60 + rank_vector) + (1 − w) / (60 + rank_keyword)
// ranks from 1 within each side's top hybridDepth(k) rows, a row absent from a side adding nothing for it.
import { comparePk } from "./pk-order.ts";
import type { SearchHit } from "./types.ts";

/** Reciprocal rank fusion's constant, as CONTRACT 11 fixes it. */
export const RRF_K = 60;

/**
 * The vector ranking's weight when a hybrid query names none: measured by `bun run bench search`
 * (docs/performance.md#search). On its labelled set 0.5 gave the best overall nDCG@10 with
 * local-semantic-v1 of 0.2, 0.35, 0.45, 0.5, 0.55, 0.65 and 0.8; with k = 60 only an even split
 * interleaves the two rankings, a weight 0.05 off it lets one side's top ten in ahead of the other's first row.
 */
export const DEFAULT_VECTOR_WEIGHT = 0.5;

/**
 * Rows taken from each side for the fusion: twice the results asked for, at least 20. A row past
 * it on a side gets nothing from that side (it is "absent from the ranking"). Measured on the
 * labelled set (docs/performance.md#search): at limit 10, depth 20 gave local-semantic-v1's hybrid
 * nDCG@10 0.514, against 0.508 at 30 and 0.482 at 100 (rows deep in one ranking only added noise),
 * local-lexical-v1's 0.385 against 0.381 and 0.386; and the vector side then plans as a search of 20
 * rows, not 100, ~3× less work at 100k rows.
 */
export function hybridDepth(k: number): number {
  return Math.max(2 * k, 20);
}

interface Fused {
  hit: SearchHit;
  rankScore: number;
  keywordScore: number | null;
}

/**
 * The best `k` of the two rankings fused, by rank score then primary key, each hit with its cosine
 * and rank score, and its BM25 when the keyword side holds it (null otherwise: see withLateScores).
 */
export function fuseRankings(vectorSide: SearchHit[], keywordSide: (SearchHit & { keywordScore: number })[], w: number, k: number, numericPk: boolean): SearchHit[] {
  const fused = new Map<string, Fused>();
  vectorSide.forEach((hit, i) => fused.set(hit.pk, { hit, rankScore: w / (RRF_K + i + 1), keywordScore: null }));
  keywordSide.forEach((hit, i) => {
    const add = (1 - w) / (RRF_K + i + 1);
    const seen = fused.get(hit.pk);
    // A row on both sides keeps the vector side's cosine, as a `vector` search reports it.
    if (seen) Object.assign(seen, { rankScore: seen.rankScore + add, keywordScore: hit.keywordScore });
    else fused.set(hit.pk, { hit, rankScore: add, keywordScore: hit.keywordScore });
  });
  const byPk = comparePk(numericPk);
  const ordered = [...fused.values()].sort((a, b) => b.rankScore - a.rankScore || byPk(a.hit.pk, b.hit.pk)).slice(0, k);
  return ordered.map((f) => ({ pk: f.hit.pk, score: f.hit.score, metadata: f.hit.metadata, text: f.hit.text, keywordScore: f.keywordScore, rankScore: f.rankScore }));
}

/** Rows the vector side found whose words match past the keyword side's depth still get their BM25: `late` holds them. */
export function withLateScores(hits: SearchHit[], late: Map<string, number>): SearchHit[] {
  return hits.map((h) => (h.keywordScore == null ? { ...h, keywordScore: late.get(h.pk) ?? null } : h));
}

/** The hits whose BM25 the keyword side did not give. */
export const unscored = (hits: SearchHit[]): SearchHit[] => hits.filter((h) => h.keywordScore == null);
