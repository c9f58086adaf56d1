// Filtered top-k on one pgvector table. The WHERE clause is the compiled filter, so every hit
// satisfies it whatever path answers. Steps:
//  1. ANN: `ORDER BY embedding <=> q LIMIT k+1` with a raised ef_search and pgvector 0.8's
//     iterative scan (relaxed order), so a filter that rejects most neighbours still fills k;
//  2. fewer than k+1 rows back (the filter matches few rows, or the scan gave up): the same
//     query scored exactly instead — an expression the index cannot serve (`score DESC`);
//  3. re-sort by exact score, then pk; when the k-th and (k+1)-th tie, every row with that score
//     is read, so ties at the boundary are broken by pk and not by index order.
import { comparePk } from "../../shared/pk-order.ts";
import type { SearchHit, SearchRequest } from "../vector-store/index.ts";
import { compilePg, metadataColumn, type FilterNode } from "./filters-pg.ts";
import { readValue, vectorText, type Param } from "./pgvector-rows.ts";
import { indexedExpression, indexKind, qualified, queryVector, type TableComment } from "./pgvector-schema.ts";
import type { PlatformSearchResult } from "./types.ts";

/** The slice of postgres.js a search needs (a transaction or a reserved connection). */
export interface Runner {
  unsafe(query: string, params?: Param[]): Promise<Record<string, unknown>[]>;
}

/** pgvector's bounds on ef_search are 1-1000; ≥ 200 keeps recall near 1 for k ≤ 100. */
const efSearch = (k: number) => Math.min(1000, Math.max(200, 2 * (k + 1)));
/** Tuples an iterative scan may visit before giving up (pgvector's default is 20,000). */
const MAX_SCAN_TUPLES = 50_000;

interface Candidate extends SearchHit {}

export async function searchTable(tx: Runner, table: string, live: TableComment, node: FilterNode | null, req: SearchRequest): Promise<PlatformSearchResult> {
  const k = Math.floor(req.k);
  if (!(k > 0)) return { hits: [], path: "empty" };
  const { spec } = live;
  const query = new Query(table, live, node, vectorText(req.vector, spec.dimensions, "(query)"));
  let path: PlatformSearchResult["path"] = "index";
  let rows: Candidate[] = [];
  if (indexKind(spec.dimensions) !== "none") {
    await tx.unsafe("SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.max_scan_tuples', $2, true)", [
      String(efSearch(k)),
      String(MAX_SCAN_TUPLES),
    ]);
    rows = await query.run(tx, "ann", k + 1);
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
  return (a: Candidate, b: Candidate) => (a.score !== b.score ? b.score - a.score : pkOrder(a.pk, b.pk));
}

/** One search's SQL: `$1` is the query vector, the filter's parameters follow. */
class Query {
  private readonly params: Param[];
  private readonly where: string;
  private readonly select: string;
  private readonly from: string;

  constructor(table: string, private readonly live: TableComment, node: FilterNode | null, vector: string) {
    const { spec } = live;
    this.params = [vector];
    this.where = compilePg(node, spec.metadata, this.params);
    const meta = spec.metadata.map((_, i) => `, ${metadataColumn(i)}`).join("");
    // Score from the stored f32 vector, whatever the index holds (halfvec beyond 2,000 dims).
    this.select = `SELECT pk, text${meta}, 1 - (embedding <=> $1::text::vector(${spec.dimensions})) AS score`;
    this.from = qualified(table);
  }

  async run(tx: Runner, kind: "ann" | "exact" | "tie", limit?: number, tie?: number): Promise<Candidate[]> {
    const { dimensions } = this.live.spec;
    const params = [...this.params];
    let sql = `${this.select} FROM ${this.from} WHERE ${this.where}`;
    if (kind === "ann") {
      sql += ` ORDER BY ${indexedExpression(dimensions)} <=> ${queryVector(dimensions, "$1::text")} LIMIT ${limit}`;
    } else if (kind === "exact") {
      sql += ` ORDER BY score DESC LIMIT ${limit}`;
    } else {
      params.push(String(tie));
      sql += ` AND 1 - (embedding <=> $1::text::vector(${dimensions})) = $${params.length}::text::float8`;
    }
    const rows = await tx.unsafe(sql, params);
    return rows.map((r) => this.hit(r));
  }

  private hit(r: Record<string, unknown>): Candidate {
    const metadata: SearchHit["metadata"] = {};
    this.live.spec.metadata.forEach((c, i) => (metadata[c.name] = readValue(c.type, r[metadataColumn(i)])));
    return { pk: String(r.pk), score: Number(r.score), metadata, text: String(r.text) };
  }
}
