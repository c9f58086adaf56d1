// Filtered top-k on one pgvector table: the plan and the SQL. The WHERE clause is the compiled
// filter, so every hit satisfies it whatever path answers. The managed planner's idea
// (vector-store/planner.ts), with Postgres's own estimate of the filter's matches:
//  - a filter estimated to match few rows (≤ EXACT_MAX_ROWS), or less than MIN_ANN_SHARE of the
//    table, or so small a share that HNSW would need more than pgvector's 1,000 candidates: those
//    rows scored exactly, read through the metadata columns' b-tree indexes. Ordered outside a
//    subquery (`OFFSET 0` keeps it one), which the HNSW index cannot serve;
//  - otherwise ANN: `ORDER BY embedding <=> q LIMIT k+1` with pgvector 0.8's iterative scan
//    (relaxed order) and ef_search widened to OVERSAMPLE × (k+1) / selectivity, so the first
//    candidates already hold the filtered top-k. (Postgres's own choice took HNSW at 2 % on
//    100k × 384 for recall 0.89 in 19 ms, where the exact scan takes 1.6 ms for 1.0.)
//  - fewer than k+1 rows back (an estimate far off, or the scan gave up): exact after all;
//  - re-sorted by exact score, then pk; when the k-th and (k+1)-th tie, every row with that score
//    is read, so ties at the boundary are broken by pk and not by index order.
import { comparePk, type SearchHit } from "../store-api/index.ts";
import { compilePg, type FilterNode } from "./filters-pg.ts";
import { readValue, type Param } from "./pgvector-rows.ts";
import { layoutOf, qualified, TEXT_COLUMN, VECTOR_COLUMN, vectorType, type TableComment } from "./pgvector-schema.ts";

/**
 * ef_search of an unfiltered search (and the floor of a filtered one): recall@10 0.998 on
 * 100k × 384 clustered data in 2.1 ms (`bun run bench platform`). pgvector caps it at 1,000.
 */
export const EF_MIN = 200;
export const EF_MAX = 1000;
/**
 * Candidates per wanted hit past the filter's selectivity, and the smallest selectivity HNSW
 * serves: measured on 100k × 384 clustered (bench platform), filtered HNSW reached recall@10 0.999
 * at 5 % (ef 660) and 0.995 at 20 %, but only 0.992 at 4 % (ef 825) and 0.985 at 3.5 % (ef 943):
 * below 5 % the true neighbours lie too far out in the graph, whatever ef, so the exact scan answers.
 */
const OVERSAMPLE = 3;
export const MIN_ANN_SHARE = 0.05;
/** Tuples an iterative scan may visit before giving up (then exact answers); pgvector's default is 20,000. */
export const MAX_SCAN_TUPLES = 50_000;
/**
 * Scoring this many rows exactly costs about one filtered HNSW search (~1.5 µs a 384-wide row
 * through the b-tree: 3.3 ms for 2,000 rows, 7.5 ms for 5,000, where HNSW at 5 % takes 4.8 ms).
 */
export const EXACT_MAX_ROWS = 2_500;

/**
 * Rows asked of the ANN scan: k+1, for the tie check. Relaxed order only reorders across the scan's
 * iterations, and the rows are re-sorted here; asking 2k instead cost a second iteration at 10 %
 * selectivity (1.6 against 0.95 ms) for no recall (0.997 both, bench platform).
 */
export const annLimit = (k: number) => k + 1;

/** Postgres's estimate: rows the filter matches, of `total` in the table. */
export type Estimate = { rows: number; total: number };

export type Plan = { kind: "ann"; ef: number } | { kind: "exact" };

/** `exactMaxRows`: tests lower it to reach the HNSW path on small tables. */
export function planSearch(k: number, estimate: Estimate | null, indexable: boolean, exactMaxRows = EXACT_MAX_ROWS): Plan {
  if (!indexable) return { kind: "exact" };
  if (!estimate) return { kind: "ann", ef: Math.min(EF_MAX, Math.max(EF_MIN, Math.ceil(OVERSAMPLE * annLimit(k)))) };
  if (estimate.rows <= exactMaxRows) return { kind: "exact" };
  const share = Math.min(1, estimate.rows / Math.max(estimate.total, estimate.rows, 1));
  const ef = Math.ceil((OVERSAMPLE * (k + 1)) / share);
  return share < MIN_ANN_SHARE || ef > EF_MAX ? { kind: "exact" } : { kind: "ann", ef: Math.max(EF_MIN, ef) };
}

export function settingsStatement(ef: number): string {
  return `SELECT set_config('hnsw.ef_search', '${ef}', true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.max_scan_tuples', '${MAX_SCAN_TUPLES}', true)`;
}

/**
 * `$n` placeholders replaced by literals, for statements sent together in one simple-protocol
 * message (one round trip). Quoted literals and identifiers are skipped; text is quoted with
 * doubled quotes, which is exact under standard_conforming_strings (the store's connections set it).
 */
export function inline(sql: string, params: Param[]): string {
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g, (token, n: string | undefined) => {
    if (n === undefined) return token;
    const value = params[Number(n) - 1];
    return value === null || value === undefined ? "NULL" : `'${value.replaceAll("'", "''")}'`;
  });
}

/** One search's statements on one generation table. */
export class SearchSql {
  /** The WHERE clause with its values inlined. */
  readonly where: string;
  private readonly select: string;
  private readonly from: string;

  constructor(
    table: string,
    private readonly live: TableComment,
    node: FilterNode | null,
    vectorText: string,
  ) {
    const { spec } = live;
    const layout = layoutOf(spec);
    const params: Param[] = [];
    this.where = inline(compilePg(node, spec.metadata, params, layout.meta), params);
    const vector = inline(`$1::text::${vectorType(spec.dimensions)}`, [vectorText]);
    const meta = spec.metadata.map((_, i) => `, ${layout.meta(i)} AS m${i}`).join("");
    // The query vector once: ordered by the `distance` output column, which the HNSW index serves
    // as it would the expression; score = 1 − distance is then taken in JS (the same double arithmetic).
    this.select = `SELECT ${layout.pk} AS key, ${TEXT_COLUMN} AS text${meta}, ${VECTOR_COLUMN} <=> ${vector} AS distance`;
    this.from = qualified(table);
  }

  /** Postgres's estimate of the filter's matches and of the table's rows (planner statistics, no scan). */
  estimate(): string {
    return `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${this.from} WHERE ${this.where}; SELECT reltuples::float8 AS total FROM pg_class WHERE oid = '${this.from.replaceAll("'", "''")}'::regclass`;
  }

  ann(limit: number): string {
    return `${this.select} FROM ${this.from} WHERE ${this.where} ORDER BY distance LIMIT ${limit}`;
  }

  exact(limit: number): string {
    return `SELECT * FROM (${this.select} FROM ${this.from} WHERE ${this.where} OFFSET 0) AS scored ORDER BY distance LIMIT ${limit}`;
  }

  /** Every row at exactly the distance of `score` (JS's shortest float text round-trips exactly). */
  tie(score: number): string {
    return `SELECT * FROM (${this.select} FROM ${this.from} WHERE ${this.where} OFFSET 0) AS scored WHERE 1 - distance = '${score}'::float8`;
  }

  hits(rows: Record<string, unknown>[]): SearchHit[] {
    return rows.map((r) => {
      const metadata: SearchHit["metadata"] = {};
      this.live.spec.metadata.forEach((c, i) => (metadata[c.name] = readValue(c.type, r[`m${i}`])));
      return { pk: String(r.key), score: 1 - Number(r.distance), metadata, text: String(r.text) };
    });
  }
}

/** The EXPLAIN (FORMAT JSON) and reltuples answers of `SearchSql.estimate`. */
export function readEstimate(plan: Record<string, unknown>[], total: Record<string, unknown>[]): Estimate {
  let json = plan[0]?.["QUERY PLAN"];
  if (typeof json === "string") json = JSON.parse(json);
  const rows = (json as { Plan?: { "Plan Rows"?: number } }[] | undefined)?.[0]?.Plan?.["Plan Rows"];
  return { rows: rows ?? Infinity, total: Number(total[0]?.total ?? -1) };
}

export function byScoreThenPk(numeric: boolean) {
  const pkOrder = comparePk(numeric);
  return (a: SearchHit, b: SearchHit) => (a.score !== b.score ? b.score - a.score : pkOrder(a.pk, b.pk));
}
