// Filtered top-k on one warehouse table. The warehouse has no vector index: every filtered row is
// scored with VECTOR_COSINE_SIMILARITY in one statement, which is how its own vector search works.
// The query vector is a one-row CTE, computed once: either a bound vector (the service embedded
// the query with a provider) or EMBED_TEXT_768(model, text), so a built-in model's query text is
// embedded by the warehouse in the very statement that searches. `RANK() … <= k` keeps every row
// tied with the k-th, so ties at the boundary are broken by pk here and not by the warehouse.
import { DriverError } from "../../shared/errors.ts";
import { comparePk, type SearchHit } from "../store-api/index.ts";
import type { QueryResult } from "../sources/warehouse-connect.ts";
import type { FilterNode } from "./filters-pg.ts";
import { compileWarehouse, type Bind } from "./warehouse-filters.ts";
import { readKey, readMetadata, vectorCast, vectorJson } from "./warehouse-rows.ts";
import { layoutOf, quoteIdent, quoteLiteral, TEXT_COLUMN, VECTOR_COLUMN, type WarehouseSpec } from "./warehouse-schema.ts";

export type Run = (sql: string, binds: Bind[], operation: string) => Promise<QueryResult>;

/** The query side of a search: a vector, or a text the warehouse embeds with the generation's model. */
export type SearchQuery = { vector: Float32Array } | { text: string };

export interface TableSearch {
  k: number;
  minScore?: number | null;
  node: FilterNode | null;
  query: SearchQuery;
}

/** Models the warehouse names by output width (its EMBED_TEXT_<d> functions). */
const EMBED_FUNCTIONS: Record<number, string> = { 768: "SNOWFLAKE.CORTEX.EMBED_TEXT_768", 1024: "SNOWFLAKE.CORTEX.EMBED_TEXT_1024" };
const MODEL_NAME = /^[a-z0-9][a-z0-9.\-_]*$/i;

/**
 * `EMBED_TEXT_<d>('<model>', <text>)`. The model is a literal (the function wants a constant);
 * names are checked against a plain pattern first, so nothing but a name reaches the SQL.
 */
export function embedCall(spec: WarehouseSpec, textSql: string): string {
  const fn = EMBED_FUNCTIONS[spec.dimensions];
  if (!fn) throw new DriverError(`the warehouse embeds in SQL only at ${Object.keys(EMBED_FUNCTIONS).join(" or ")} dimensions, this table has ${spec.dimensions}`, { retryable: false });
  if (!spec.model || !MODEL_NAME.test(spec.model)) throw new DriverError(`no built-in model recorded for this generation (${JSON.stringify(spec.model ?? null)})`, { retryable: false });
  return `${fn}(${quoteLiteral(spec.model)}, ${textSql})`;
}

export async function searchTable(run: Run, table: string, spec: WarehouseSpec, search: TableSearch): Promise<SearchHit[]> {
  const k = Math.floor(search.k);
  if (!(k > 0)) return [];
  const layout = layoutOf(spec);
  const binds: Bind[] = [];
  let query: string;
  if ("vector" in search.query) {
    binds.push(vectorJson(search.query.vector, spec.dimensions, "(query)"));
    query = vectorCast("?", spec.dimensions);
  } else {
    binds.push(search.query.text);
    query = embedCall(spec, "?");
  }
  const where = compileWarehouse(search.node, spec.metadata, layout.meta, binds);
  const score = `VECTOR_COSINE_SIMILARITY(t.${quoteIdent(VECTOR_COLUMN)}, q."V")`;
  const columns = [layout.pk, TEXT_COLUMN, ...layout.meta].map((c) => `t.${quoteIdent(c)}`);
  const sql =
    `WITH q AS (SELECT ${query} AS "V") SELECT ${columns.join(", ")}, ${score} AS "VECSYNC_SCORE" FROM ${table} t, q ` +
    `WHERE ${where} QUALIFY RANK() OVER (ORDER BY ${score} DESC) <= ${k}`;
  const result = await run(sql, binds, "search");
  const scoreAt = columns.length;
  const hits = result.rows.map(
    (row): SearchHit => ({ pk: readKey(result, row), score: Number(row[scoreAt]), metadata: readMetadata(spec, row, 2), text: String(row[1]) }),
  );
  const pkOrder = comparePk(spec.numericPk);
  hits.sort((a, b) => (a.score !== b.score ? b.score - a.score : pkOrder(a.pk, b.pk)));
  const min = search.minScore ?? null;
  return hits.slice(0, k).filter((h) => min === null || h.score >= min);
}
