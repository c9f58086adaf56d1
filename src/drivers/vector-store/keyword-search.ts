// Keyword search in one generation (docs/vector-tables.md#query-modes): rows matching any of the
// query's words, by BM25, the filter applied exactly. A ready generation whose mirror keeps its f32
// vectors ranks in memory (keyword-postings.ts, keyword-memory.ts); otherwise (loading, or compact)
// it ranks in libSQL from the generation's FTS5 index (keyword-index.ts) with the store's own SQL
// filter (compileSql), as here. The two rank alike: the same tokens, formula and statistics. Each
// row's cosine is answered as `similarity_score` in every mode, and `min_similarity_score` filters on it.
import type { Client } from "@libsql/client";
import { comparePk, compileSql, type FilterNode, type Metadata, metadataColumnName, type SearchHit } from "../store-api/index.ts";
import { cosineDistance } from "./refine.ts";
import { readMetadataValue } from "./rows.ts";
import type { KeywordQuery } from "./keyword-index.ts";
import type { KeywordPostings } from "./keyword-postings.ts";
import { countInMemory, type KeywordHit, type KeywordRanking, rankInMemory, scoresInMemory } from "./keyword-memory.ts";
import { generationTables } from "./schema.ts";
import type { SearchTarget } from "./search.ts";

/** The first page reads the rows wanted and a few more: ties at the cut, rows under `minScore`. */
const FIRST_PAGE_EXTRA = 16;

/**
 * The `want` best rows for `match` (keyword-index.ts matchExpression; null: no words, no rows).
 * `query` is the unit query vector. Pages grow ×4 until `want` rows reach `minScore` and the page
 * read past the last score kept (so rows tied with it are all seen and ordered by primary key),
 * or the matches run out: with at least `want` rows qualifying, `want` are answered.
 */
export async function keywordRanking(client: Client, gen: SearchTarget, query: Float32Array, q: KeywordQuery, want: number, node: FilterNode | null, minScore: number | null): Promise<KeywordRanking> {
  const { match } = q;
  if (match === null || want <= 0) return { hits: [], examined: 0 };
  const words = inMemory(gen);
  if (words) return rankInMemory(gen, words, query, q.words, want, node, minScore);
  const t = generationTables(gen.collection, gen.generation);
  const where = compileSql(node, gen.spec.metadata, "r");
  // Ranked on the index (and the filter's columns) alone, then only the page's rows read whole:
  // joining every matching row's text and vector before the sort read ~2 KB a match, so a common
  // word at 100k rows took 160 ms (docs/performance.md#search).
  const filtered = node === null ? "" : ` JOIN ${t.rows} r ON r.rid = ${t.words}.rowid`;
  const rank = `SELECT ${t.words}.rowid AS rid, -bm25(${t.words}) AS kw FROM ${t.words}${filtered}
    WHERE ${t.words} MATCH ?${node === null ? "" : ` AND ${where.sql}`} ORDER BY kw DESC, rid LIMIT ? OFFSET ?`;
  const metaCols = gen.spec.metadata.map((_, i) => `, r.${metadataColumnName(i)}`).join("");
  const read = `SELECT r.rid, r.pk${metaCols}, d.text, d.vec FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid
    WHERE r.rid IN (SELECT value FROM json_each(?))`;
  const kept: KeywordHit[] = [];
  let offset = 0;
  let page = want + FIRST_PAGE_EXTRA;
  for (;;) {
    const ranked = await client.execute({ sql: rank, args: [match, ...(node === null ? [] : where.args), BigInt(page), BigInt(offset)] });
    const rows = ranked.rows.length === 0 ? [] : (await client.execute({ sql: read, args: [JSON.stringify(ranked.rows.map((r) => Number(r.rid)))] })).rows;
    const byRid = new Map(rows.map((r) => [Number(r.rid), r]));
    for (const { rid, kw } of ranked.rows) {
      const r = byRid.get(Number(rid));
      if (!r) continue; // deleted between the two reads
      const score = 1 - cosineDistance(query, new Float32Array((r.vec as ArrayBuffer).slice(0)));
      if (minScore !== null && score < minScore) continue;
      const metadata: Metadata = {};
      gen.spec.metadata.forEach((c, i) => (metadata[c.name] = readMetadataValue(gen.spec, i, r[metadataColumnName(i)])));
      kept.push({ pk: String(r.pk), score, metadata, text: String(r.text), keywordScore: Number(kw) });
    }
    offset += ranked.rows.length;
    const last = ranked.rows[ranked.rows.length - 1];
    const edge = kept[want - 1]?.keywordScore;
    if (ranked.rows.length < page || (edge !== undefined && Number(last?.kw) < edge)) break;
    page *= 4;
  }
  const byPk = comparePk(gen.spec.numericPk);
  kept.sort((a, b) => b.keywordScore - a.keywordScore || byPk(a.pk, b.pk));
  return { hits: kept.slice(0, want), examined: offset };
}

/** BM25 scores of the given hits (rows as they are now, with their texts); rows that match no word are absent. */
export async function keywordScoresOf(client: Client, gen: SearchTarget, q: KeywordQuery, hits: SearchHit[]): Promise<Map<string, number>> {
  const { match } = q;
  if (match === null || hits.length === 0) return new Map();
  const words = inMemory(gen);
  if (words) return scoresInMemory(words, q.words, hits);
  const pks = hits.map((h) => h.pk);
  const t = generationTables(gen.collection, gen.generation);
  // bm25() takes the whole index's statistics whatever rows are asked, so these equal a ranking's scores.
  const rs = await client.execute({
    sql: `SELECT r.pk, -bm25(${t.words}) AS kw FROM ${t.words} JOIN ${t.rows} r ON r.rid = ${t.words}.rowid
          WHERE ${t.words} MATCH ? AND r.pk IN (SELECT value FROM json_each(?))`,
    args: [match, JSON.stringify(pks)],
  });
  return new Map(rs.rows.map((r) => [String(r.pk), Number(r.kw)]));
}

/** Rows matching a word and passing the filter: explain's `estimated_matches` for a keyword search (counted, so exact). */
export async function countKeywordMatches(client: Client, gen: SearchTarget, q: KeywordQuery, node: FilterNode | null): Promise<number> {
  const { match } = q;
  if (match === null) return 0;
  const words = inMemory(gen);
  if (words) return countInMemory(gen, words, q.words, node);
  const t = generationTables(gen.collection, gen.generation);
  const where = compileSql(node, gen.spec.metadata, "r");
  const rs = await client.execute({
    sql: `SELECT count(*) AS n FROM ${t.words} JOIN ${t.rows} r ON r.rid = ${t.words}.rowid WHERE ${t.words} MATCH ? AND ${where.sql}`,
    args: [match, ...where.args],
  });
  return Number(rs.rows[0]?.n ?? 0);
}

/** The in-memory ranking when the generation has a whole one: not while it loads or it is made, not once compact. */
function inMemory(gen: SearchTarget): KeywordPostings | null {
  return gen.status === "loading" ? null : gen.mirror.keywordPostings();
}
