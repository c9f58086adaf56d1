// BM25 over a pgvector platform table, in SQL (docs/vector-tables.md#query-modes): Okapi BM25 as
// SQLite FTS5's bm25() computes it, so a platform table ranks the rows as a managed one does
// (test/drivers/platform/keyword-parity.property.test.ts):
//   score = Σ over the query's words t in the row of idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))
//   idf(t) = ln((N − n + 0.5) / (n + 0.5)), floored at 1e-6 (FTS5's floor, for words in half the rows or more)
// with k1 = 1.2, b = 0.75, tf and dl from the row's keyword columns, N, avgdl and n from the
// statistics beside the table (pgvector-keyword.ts), all read by the one statement, so from one
// snapshot. Every row holding a word (GIN `?|`) and passing the filter (the compiled filter, as the
// vector search uses) is scored; `min_similarity_score` is applied in the same statement on the
// cosine (pgvector's `<=>`), before the LIMIT, so `k` rows come back whenever `k` qualify.
import { comparePk, type SearchHit } from "../store-api/index.ts";
import { compilePg, type FilterNode } from "./filters-pg.ts";
import { statsTables } from "./pgvector-keyword.ts";
import { readValue, type Param } from "./pgvector-rows.ts";
import { inline } from "./pgvector-search.ts";
import { LENGTH_COLUMN, layoutOf, qualified, type TableComment, TERMS_COLUMN, TEXT_COLUMN, VECTOR_COLUMN, vectorType } from "./pgvector-schema.ts";

/** FTS5's bm25() constants (CONTRACT 11). */
const K1 = 1.2;
const B = 0.75;
/** FTS5's IDF floor: a word in half the rows or more counts almost nothing, never negatively. */
const IDF_FLOOR = 1e-6;

export type KeywordHit = SearchHit & { keywordScore: number };

type Rows = Record<string, unknown>[];
type Run = (sql: string) => Promise<Rows>;

/** One keyword query's statements on one generation table; every value inlined as a quoted literal. */
export class KeywordSql {
  /** The `scored` CTE with `extra` (more conditions on `r`, numbered past `params`) and its values inlined. */
  private readonly scored: (extra: string, extraParams: Param[]) => string;
  /** Parameters the filter and the query take, before `extra`'s. */
  private readonly paramCount: number;

  constructor(
    table: string,
    private readonly live: TableComment,
    terms: string[],
    vectorText: string,
    node: FilterNode | null,
  ) {
    const { spec, generation } = live;
    const layout = layoutOf(spec);
    const stats = statsTables(table, generation);
    const params: Param[] = [];
    const where = compilePg(node, spec.metadata, params, layout.meta);
    const meta = spec.metadata.map((_, i) => `, r.${layout.meta(i)} AS m${i}`).join("");
    const n = params.length;
    params.push(JSON.stringify(terms), vectorText);
    // q: each query word with its IDF; the row's score sums over the words it holds (`->>` is null
    // otherwise) in the managed store's order and grouping (highest IDF first, then by word), so a
    // row scores the same bits in both stores and true ties stay ties, ordered by key.
    const sql = `WITH s AS (SELECT docs::float8 AS n, length::float8 / greatest(docs, 1)::float8 AS avgdl FROM ${stats.totals}),
      q AS (
        SELECT w.term, CASE WHEN x.idf <= 0 THEN ${IDF_FLOOR}::float8 ELSE x.idf END AS idf
        FROM jsonb_array_elements_text($${n + 1}::text::jsonb) AS w(term) CROSS JOIN s
        LEFT JOIN ${stats.terms} k ON k.term = w.term
        CROSS JOIN LATERAL (SELECT ln((s.n - coalesce(k.df, 0)::float8 + 0.5::float8) / (coalesce(k.df, 0)::float8 + 0.5::float8)) AS idf) x
      ),
      scored AS (
        SELECT r.${layout.pk} AS key, r.${TEXT_COLUMN} AS text${meta}, r.${VECTOR_COLUMN} <=> $${n + 2}::text::${vectorType(spec.dimensions)} AS distance,
          (SELECT sum(q.idf * ((f.tf * ${K1 + 1}::float8) / (f.tf + ${K1}::float8 * (1::float8 - ${B}::float8 + ${B}::float8 * r.${LENGTH_COLUMN}::float8 / s.avgdl))) ORDER BY q.idf DESC, q.term COLLATE "C")
             FROM q CROSS JOIN LATERAL (SELECT (r.${TERMS_COLUMN} ->> q.term)::float8 AS tf) f WHERE f.tf IS NOT NULL) AS kw
        FROM ${qualified(table)} r CROSS JOIN s
        WHERE r.${TERMS_COLUMN} ?| ARRAY(SELECT term FROM q) AND (${where})`;
    this.scored = (extra, extraParams) => inline(`${sql} ${extra})`, [...params, ...extraParams]);
    this.paramCount = params.length;
  }

  /** The best `limit` rows at or above `minScore`, by BM25; `atLeast`: every row scoring at least it instead. */
  ranking(limit: number, minScore: number | null, atLeast?: number): string {
    const conditions = [minScore === null ? null : `1 - distance >= '${minScore}'::float8`, atLeast === undefined ? null : `kw >= '${atLeast}'::float8`].filter((c) => c !== null);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
    const tail = atLeast === undefined ? `ORDER BY kw DESC LIMIT ${limit}` : "";
    return `${this.scored("", [])} SELECT * FROM scored ${where} ${tail}`;
  }

  /** The BM25 of these rows (filters aside: their rows were already chosen), rows without a word absent. */
  scoresOf(pks: string[]): string {
    const layout = layoutOf(this.live.spec);
    return `${this.scored(`AND r.${layout.pk} IN (${layout.pkList(this.paramCount + 1)})`, [JSON.stringify(pks)])} SELECT key, kw FROM scored`;
  }

  hits(rows: Rows): KeywordHit[] {
    return rows.map((r) => {
      const metadata: SearchHit["metadata"] = {};
      this.live.spec.metadata.forEach((c, i) => (metadata[c.name] = readValue(c.type, r[`m${i}`])));
      return { pk: String(r.key), score: 1 - Number(r.distance), metadata, text: String(r.text), keywordScore: Number(r.kw) };
    });
  }
}

/**
 * The `want` best rows by BM25, ties by primary key (CONTRACT 7, the order shared with the managed
 * store). As the vector search does: `want + 1` rows read; when the last two tie, every row with at
 * least that score is read, so the rows kept at the cut are the first by key, not by scan order.
 */
export async function keywordRanking(run: Run, q: KeywordSql, want: number, minScore: number | null, numericPk: boolean): Promise<KeywordHit[]> {
  if (want <= 0) return [];
  let hits = q.hits(await run(q.ranking(want + 1, minScore)));
  const byPk = comparePk(numericPk);
  const order = (a: KeywordHit, b: KeywordHit) => b.keywordScore - a.keywordScore || byPk(a.pk, b.pk);
  hits.sort(order);
  if (hits.length > want && hits[want - 1]!.keywordScore === hits[want]!.keywordScore) {
    hits = q.hits(await run(q.ranking(0, minScore, hits[want]!.keywordScore))).sort(order);
  }
  return hits.slice(0, want);
}

export async function keywordScores(run: Run, q: KeywordSql, pks: string[]): Promise<Map<string, number>> {
  if (pks.length === 0) return new Map();
  const rows = await run(q.scoresOf(pks));
  return new Map(rows.map((r) => [String(r.key), Number(r.kw)]));
}
