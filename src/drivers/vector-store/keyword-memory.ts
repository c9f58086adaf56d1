// The keyword ranking of a ready generation, from memory (keyword-postings.ts, keyword-rank.ts): the filter is the
// mirror's predicate, as the vector paths apply it; cosines are the exact path's (rescore over the
// mirror's f32 vectors); texts are the mirror's. Synchronous, so the ranking sees one state of the
// generation.
import { comparePk, compilePredicate, type FilterNode, type SearchHit, smallIntegerKey } from "../store-api/index.ts";
import { rescore } from "./exact.ts";
import type { KeywordPostings } from "./keyword-postings.ts";
import { countRows, type Ranked, rankRows, scoreText } from "./keyword-rank.ts";
import type { SearchTarget } from "./search.ts";

export interface KeywordHit extends SearchHit {
  keywordScore: number;
}

/** A keyword ranking, from memory (here) or from the FTS5 index (keyword-search.ts). */
export interface KeywordRanking {
  /** At most `want`, by BM25 (highest first), ties by primary key. */
  hits: KeywordHit[];
  /** Rows read from the index (each passing the filter), as explain's `candidates_examined`. */
  examined: number;
}

/** Rows given their cosine at a time when a minimum cosine drops rows after the ranking. */
const COSINE_BATCH = 64;

function acceptor(gen: SearchTarget, node: FilterNode | null): ((rid: number) => boolean) | null {
  return node === null ? null : compilePredicate(node, gen.mirror.access);
}

export function rankInMemory(gen: SearchTarget, words: KeywordPostings, query: Float32Array, terms: string[], want: number, node: FilterNode | null, minScore: number | null): KeywordRanking {
  const mirror = gen.mirror;
  const byPk = comparePk(gen.spec.numericPk);
  const order = (a: number, b: number) => byPk(mirror.pkOf(a), mirror.pkOf(b));
  // Numeric keys are parsed once a ranking, not twice a comparison; they compare as comparePk would.
  const key = gen.spec.numericPk ? (rid: number) => smallIntegerKey(mirror.pkOf(rid)) : null;
  const { ranked, examined } = rankRows(words, terms, want, acceptor(gen, node), order, minScore !== null, key);
  // Ranked by BM25 then primary key already: the first `want` rows reaching `minScore` are the answer
  // (without a minimum, `ranked` holds just those).
  const kept: { row: Ranked; cosine: number }[] = [];
  for (let from = 0; from < ranked.length && kept.length < want; from += COSINE_BATCH) {
    const rows = ranked.slice(from, minScore === null ? from + want : from + COSINE_BATCH);
    const scored = rescore(mirror, query, rows.map((r) => r.rid));
    scored.forEach((c, i) => {
      const cosine = 1 - c.distance;
      if (kept.length < want && (minScore === null || cosine >= minScore)) kept.push({ row: rows[i]!, cosine });
    });
    if (minScore === null) break;
  }
  const hits: KeywordHit[] = kept.map(({ row, cosine }) => ({
    pk: mirror.pkOf(row.rid),
    score: cosine,
    metadata: mirror.metadataOf(row.rid),
    text: mirror.textOf(row.rid) ?? "",
    keywordScore: row.score,
  }));
  return { hits, examined };
}

export function scoresInMemory(words: KeywordPostings, terms: string[], hits: SearchHit[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of hits) {
    const score = scoreText(words, terms, h.text);
    if (score !== null) out.set(h.pk, score);
  }
  return out;
}

export function countInMemory(gen: SearchTarget, words: KeywordPostings, terms: string[], node: FilterNode | null): number {
  return countRows(words, terms, acceptor(gen, node));
}
