// Brute-force references for keyword and hybrid search: Okapi BM25 exactly as SQLite FTS5's
// bm25() computes it (k1 = 1.2, b = 0.75, IDF ln((N − n + 0.5) / (n + 0.5)) floored at 1e-6,
// N and the mean length over every row of the generation, not the filtered ones), cosine, and
// weighted reciprocal rank fusion. Texts in these tests are ASCII, so words are [a-z0-9]+ lowercased.
import type { Metadata, UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { cosine } from "./helpers.ts";

const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

export interface Ranked {
  pk: string;
  keywordScore: number | null;
  similarity: number;
}

/** BM25 of every row of `all` for the query's distinct words; rows matching none are absent. */
export function bm25Scores(all: UpsertRow[], query: string): Map<string, number> {
  const terms = [...new Set(words(query))];
  const docs = all.map((r) => ({ pk: r.pk, tokens: words(r.text) }));
  const n = docs.length;
  const avgdl = docs.reduce((s, d) => s + d.tokens.length, 0) / n;
  const out = new Map<string, number>();
  for (const term of terms) {
    const hits = docs.filter((d) => d.tokens.includes(term)).length;
    let idf = Math.log((n - hits + 0.5) / (hits + 0.5));
    if (idf <= 0) idf = 1e-6;
    for (const d of docs) {
      const tf = d.tokens.filter((t) => t === term).length;
      if (tf === 0) continue;
      const part = (idf * (tf * 2.2)) / (tf + 1.2 * (1 - 0.75 + (0.75 * d.tokens.length) / avgdl));
      out.set(d.pk, (out.get(d.pk) ?? 0) + part);
    }
  }
  return out;
}

type Keep = (m: Metadata) => boolean;

/** Rows passing `keep` and `minScore`, by BM25 then numeric pk; only rows matching a word. */
export function keywordReference(all: UpsertRow[], query: string, vector: Float32Array, keep: Keep = () => true, minScore: number | null = null): Ranked[] {
  const scores = bm25Scores(all, query);
  return all
    .filter((r) => keep(r.metadata) && scores.has(r.pk))
    .map((r) => ({ pk: r.pk, keywordScore: scores.get(r.pk)!, similarity: cosine(r.vector, vector) }))
    .filter((r) => minScore === null || r.similarity >= minScore)
    .sort((a, b) => b.keywordScore - a.keywordScore || Number(a.pk) - Number(b.pk));
}

/** Rows passing `keep` and `minScore`, by cosine then numeric pk. */
export function vectorReference(all: UpsertRow[], query: string, vector: Float32Array, keep: Keep = () => true, minScore: number | null = null): Ranked[] {
  const scores = bm25Scores(all, query);
  return all
    .filter((r) => keep(r.metadata))
    .map((r) => ({ pk: r.pk, keywordScore: scores.get(r.pk) ?? null, similarity: cosine(r.vector, vector) }))
    .filter((r) => minScore === null || r.similarity >= minScore)
    .sort((a, b) => b.similarity - a.similarity || Number(a.pk) - Number(b.pk));
}

/** Weighted RRF over the top `depth` of each ranking, as CONTRACT 11 writes it. */
export function hybridReference(all: UpsertRow[], query: string, vector: Float32Array, w: number, depth: number, keep: Keep = () => true): (Ranked & { rankScore: number })[] {
  const byVector = vectorReference(all, query, vector, keep).slice(0, depth);
  const byKeyword = keywordReference(all, query, vector, keep).slice(0, depth);
  const fused = new Map<string, Ranked & { rankScore: number }>();
  byVector.forEach((r, i) => fused.set(r.pk, { ...r, rankScore: w / (60 + i + 1) }));
  byKeyword.forEach((r, i) => {
    const seen = fused.get(r.pk);
    if (seen) seen.rankScore += (1 - w) / (60 + i + 1);
    else fused.set(r.pk, { ...r, rankScore: (1 - w) / (60 + i + 1) });
  });
  return [...fused.values()].sort((a, b) => b.rankScore - a.rankScore || Number(a.pk) - Number(b.pk));
}
