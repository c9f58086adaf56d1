// Filtered top-k on one pgvector table. The WHERE clause is the compiled filter, so every hit
// satisfies it whatever path answers. The managed planner's idea (vector-store/planner.ts), with
// Postgres's own estimate of the filter's matches instead of a sample:
//  1. a filter Postgres estimates to match few rows (≤ EXACT_MAX_ROWS): those rows scored exactly,
//     read through the metadata columns' b-tree indexes — an expression the HNSW index cannot
//     serve (`score DESC`), so the planner never takes it;
//  2. otherwise ANN: `ORDER BY embedding <=> q LIMIT n` with a raised ef_search and pgvector 0.8's
//     iterative scan (relaxed order), so a filter that rejects most neighbours still fills the
//     limit; fewer than k+1 rows back (an estimate far off, or the scan gave up): exact after all;
//  3. re-sort by exact score, then pk; when the k-th and (k+1)-th tie, every row with that score
//     is read, so ties at the boundary are broken by pk and not by index order.
import { comparePk } from "../../shared/pk-order.ts";
import type { SearchHit, SearchRequest } from "../vector-store/index.ts";
import { compilePg, type FilterNode } from "./filters-pg.ts";
import { readValue, vectorText, type Param } from "./pgvector-rows.ts";
import { indexable, layoutOf, qualified, TEXT_COLUMN, VECTOR_COLUMN, vectorType, type TableComment } from "./pgvector-schema.ts";
import type { PlatformSearchResult } from "./types.ts";

/** The slice of postgres.js a search needs (a transaction or a reserved connection). */
export interface Runner {
  unsafe(query: string, params?: Param[]): Promise<Record<string, unknown>[]>;
}

/**
 * Search settings, per transaction. ef_search 200 holds recall@10 ≥ 0.99 on 100k × 384 clustered
 * data at every selectivity (`bun run bench platform`); pgvector caps it at 1,000. An iterative
 * scan may visit this many tuples before giving up (pgvector's default is 20,000); past that the
 * search falls back to exact, so the bound is on time, never on correctness.
 */
export const efSearch = (k: number) => Math.min(1000, Math.max(200, 2 * (k + 1)));
export const MAX_SCAN_TUPLES = 50_000;

/**
 * Scoring this many rows exactly costs about one filtered HNSW search (~1.5 µs a 384-wide row,
 * bench platform); below it exact is as fast and needs no recall argument, above it HNSW wins.
 */
export const EXACT_MAX_ROWS = 5_000;

/** Rows asked of the ANN scan: k+1 (the tie check) with some slack, since relaxed order returns near neighbours slightly out of order. */
export const annLimit = (k: number) => Math.max(k + 1, 2 * k);

export function settingsStatement(k: number): { sql: string; params: Param[] } {
  return {
    sql: "SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.max_scan_tuples', $2, true)",
    params: [String(efSearch(k)), String(MAX_SCAN_TUPLES)],
  };
}

export async function searchTable(tx: Runner, table: string, live: TableComment, node: FilterNode | null, req: SearchRequest): Promise<PlatformSearchResult> {
  const k = Math.floor(req.k);
  if (!(k > 0)) return { hits: [], path: "empty" };
  const { spec } = live;
  const query = new Query(table, live, node, vectorText(req.vector, spec.dimensions, "(query)"));
  let path: PlatformSearchResult["path"] = "exact";
  let rows: SearchHit[] = [];
  if (indexable(spec.dimensions)) {
    const settings = settingsStatement(k);
    // Pipelined: the estimate costs no round trip of its own.
    const [, estimate] = await Promise.all([tx.unsafe(settings.sql, settings.params), node ? query.estimate(tx) : Promise.resolve(Infinity)]);
    if (estimate > EXACT_MAX_ROWS) {
      path = "index";
      rows = await query.run(tx, "ann", annLimit(k));
    }
  }
  if (rows.length < k + 1) {
    path = "exact";
    rows = await query.run(tx, "exact", k + 1);
  }
  const order = byScoreThenPk(spec.numericPk);
  rows.sort(order);
  if (rows.length > k && rows[k - 1]!.score === rows[k]!.score) {
    const tie = rows[k]!.score;
    const tied = await query.run(tx, "tie", undefined, tie);
    rows = [...rows.filter((r) => r.score > tie), ...tied].sort(order);
  }
  const min = req.minScore ?? null;
  const hits = rows.slice(0, k).filter((r) => min === null || r.score >= min);
  return { hits, path };
}

function byScoreThenPk(numeric: boolean) {
  const pkOrder = comparePk(numeric);
  return (a: SearchHit, b: SearchHit) => (a.score !== b.score ? b.score - a.score : pkOrder(a.pk, b.pk));
}

/** One search's SQL: `$1` is the query vector, the filter's parameters follow. */
class Query {
  private readonly params: Param[];
  private readonly where: string;
  private readonly select: string;
  private readonly from: string;
  private readonly vector: string;
  /** The filter alone, its parameters from `$1`, for the estimate. */
  private readonly filterOnly: { where: string; params: Param[] };

  constructor(table: string, private readonly live: TableComment, node: FilterNode | null, vector: string) {
    const { spec } = live;
    const layout = layoutOf(spec);
    this.params = [vector];
    this.where = compilePg(node, spec.metadata, this.params, layout.meta);
    const params: Param[] = [];
    this.filterOnly = { where: compilePg(node, spec.metadata, params, layout.meta), params };
    this.vector = `$1::text::${vectorType(spec.dimensions)}`;
    const meta = spec.metadata.map((_, i) => `, ${layout.meta(i)} AS m${i}`).join("");
    this.select = `SELECT ${layout.pk} AS key, ${TEXT_COLUMN} AS text${meta}, 1 - (${VECTOR_COLUMN} <=> ${this.vector}) AS score`;
    this.from = qualified(table);
  }

  /** Postgres's estimate of the rows the filter matches (the planner's statistics, no scan). */
  async estimate(tx: Runner): Promise<number> {
    const [row] = await tx.unsafe(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${this.from} WHERE ${this.filterOnly.where}`, this.filterOnly.params);
    const plan = (row?.["QUERY PLAN"] as { Plan?: { "Plan Rows"?: number } }[] | undefined)?.[0]?.Plan;
    return plan?.["Plan Rows"] ?? Infinity;
  }

  async run(tx: Runner, kind: "ann" | "exact" | "tie", limit?: number, tie?: number): Promise<SearchHit[]> {
    const params = [...this.params];
    let sql = `${this.select} FROM ${this.from} WHERE ${this.where}`;
    if (kind === "ann") {
      sql += ` ORDER BY ${VECTOR_COLUMN} <=> ${this.vector} LIMIT ${limit}`;
    } else if (kind === "exact") {
      sql += ` ORDER BY score DESC LIMIT ${limit}`;
    } else {
      params.push(String(tie));
      sql += ` AND 1 - (${VECTOR_COLUMN} <=> ${this.vector}) = $${params.length}::text::float8`;
    }
    const rows = await tx.unsafe(sql, params);
    return rows.map((r) => this.hit(r));
  }

  private hit(r: Record<string, unknown>): SearchHit {
    const metadata: SearchHit["metadata"] = {};
    this.live.spec.metadata.forEach((c, i) => (metadata[c.name] = readValue(c.type, r[`m${i}`])));
    return { pk: String(r.key), score: Number(r.score), metadata, text: String(r.text) };
  }
}
