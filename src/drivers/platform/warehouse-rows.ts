// Row values between our types and the warehouse: rows travel as a bound `VALUES` list of text
// (cast per column in SQL), vectors as JSON text cast through ARRAY to VECTOR, and results are
// read back by the catalog types the driver reports. Metadata is checked by the managed store's
// own rules (pgvector-rows.ts: checkedMetadata, NUL refused alike on both platforms).
import type { QueryResult } from "../sources/warehouse-connect.ts";
import { toSourceValue } from "../sources/warehouse-sql.ts";
import type { Metadata, MetadataUpdate, UpsertRow } from "../store-api/index.ts";
import { assertText, metadataParams, parseVectorText, readValue, vectorText } from "./pgvector-rows.ts";
import { WAREHOUSE_CAST, type Bind } from "./warehouse-filters.ts";
import { layoutOf, META_HASH_COLUMN, quoteIdent, TEXT_COLUMN, TEXT_HASH_COLUMN, VECTOR_COLUMN, type WarehouseSpec } from "./warehouse-schema.ts";

/**
 * Rows per statement. The warehouse truncates statements (binds included) past 1 MB in its
 * history and a 768-wide vector is ~15 kB of JSON; 48 rows stay far below that.
 */
export const ROWS_PER_STATEMENT = 48;

/** The vector as JSON the warehouse parses to doubles (exponent form: never read as a fixed-point NUMBER). */
export function vectorJson(vector: Float32Array, dimensions: number, pk: string): string {
  vectorText(vector, dimensions, pk); // the same checks as pgvector: dimensions, finite, non-zero
  return `[${Array.from(vector, (x) => x.toExponential()).join(",")}]`;
}

/** `PARSE_JSON(<json>)` as the table's VECTOR type. */
export const vectorCast = (json: string, dimensions: number) => `PARSE_JSON(${json})::ARRAY::VECTOR(FLOAT, ${dimensions})`;

/** One bound VALUES row set: `(?, ?, …), (…)` with its column aliases and the casts to apply. */
export interface ValuesList {
  sql: string;
  binds: Bind[];
}

/**
 * `SELECT v."K"::<pk type> AS "K", … FROM (VALUES …) AS v (…)`: the key, then `extra` text columns,
 * then the metadata columns as `M0…` cast to their types.
 */
export function valuesSelect(
  spec: WarehouseSpec,
  rows: { pk: string; extra: (string | null)[]; metadata: Metadata }[],
  extraNames: string[],
  extraCasts: ((column: string) => string)[] = [],
): ValuesList {
  const { pkType } = layoutOf(spec);
  const meta = spec.metadata.map((_, i) => `M${i}`);
  const names = ["K", ...extraNames, ...meta];
  const binds: Bind[] = [];
  const tuples = rows.map((r) => {
    const values = [r.pk, ...r.extra, ...metadataParams(spec, r.metadata, r.pk)];
    binds.push(...values);
    return `(${values.map(() => "?").join(", ")})`;
  });
  const select = [
    `v."K"::${pkType} AS "K"`,
    ...extraNames.map((n, i) => `${(extraCasts[i] ?? ((c: string) => c))(`v.${quoteIdent(n)}`)} AS ${quoteIdent(n)}`),
    ...spec.metadata.map((c, i) => `v."M${i}"::${WAREHOUSE_CAST[c.type]} AS "M${i}"`),
  ];
  return { sql: `SELECT ${select.join(", ")} FROM (VALUES ${tuples.join(", ")}) AS v (${names.map(quoteIdent).join(", ")})`, binds };
}

/** Upsert rows as a VALUES select: key, hashes, text, vector (as VECTOR), metadata. */
export function upsertValues(spec: WarehouseSpec, rows: UpsertRow[]): ValuesList {
  const extra = rows.map((r) => ({ pk: r.pk, metadata: r.metadata, extra: [r.textHash, r.metaHash, assertText(r.text, "text", r.pk), vectorJson(r.vector, spec.dimensions, r.pk)] }));
  const asVector = (column: string) => vectorCast(column, spec.dimensions);
  return valuesSelect(spec, extra, ["TH", "MH", "TX", "V"], [(c) => c, (c) => c, (c) => c, asVector]);
}

export function metadataValues(spec: WarehouseSpec, updates: MetadataUpdate[]): ValuesList {
  return valuesSelect(spec, updates.map((u) => ({ pk: u.pk, metadata: u.metadata, extra: [u.metaHash] })), ["MH"]);
}

/**
 * `MERGE INTO table t USING (using) s ON key`: matched rows get `sets`, unmatched ones are
 * inserted (key first) unless `insert` is false; `deleteWhen` deletes matched rows it holds for,
 * `insertWhen` limits the inserts. The source columns are `s."K"` and those `sets` name.
 */
export function mergeSql(table: string, spec: WarehouseSpec, using: string, sets: [string, string][], opts: { insert: boolean; deleteWhen?: string; insertWhen?: string }): string {
  const pk = quoteIdent(layoutOf(spec).pk);
  const columns = sets.map(([c]) => quoteIdent(c));
  const values = sets.map(([, v]) => v);
  let sql = `MERGE INTO ${table} t USING (${using}) s ON t.${pk} = s."K"`;
  if (opts.deleteWhen) sql += ` WHEN MATCHED AND ${opts.deleteWhen} THEN DELETE`;
  sql += ` WHEN MATCHED THEN UPDATE SET ${columns.map((c, i) => `${c} = ${values[i]}`).join(", ")}`;
  if (opts.insert) sql += ` WHEN NOT MATCHED${opts.insertWhen ? ` AND ${opts.insertWhen}` : ""} THEN INSERT (${[pk, ...columns].join(", ")}) VALUES (${['s."K"', ...values].join(", ")})`;
  return sql;
}

/** Every stored column but the key, from a USING row of TX, TH, MH, M0… and the given vector expression. */
export function rowSets(spec: WarehouseSpec, vector: string): [string, string][] {
  const meta = layoutOf(spec).meta.map((m, i): [string, string] => [m, `s."M${i}"`]);
  return [[TEXT_COLUMN, 's."TX"'], [TEXT_HASH_COLUMN, 's."TH"'], [META_HASH_COLUMN, 's."MH"'], ...meta, [VECTOR_COLUMN, vector]];
}

export function upsertMergeSql(table: string, spec: WarehouseSpec, values: ValuesList): string {
  return mergeSql(table, spec, values.sql, rowSets(spec, 's."V"'), { insert: true });
}

export function metadataMergeSql(table: string, spec: WarehouseSpec, values: ValuesList): string {
  const sets = rowSets(spec, "").filter(([c]) => c !== TEXT_COLUMN && c !== TEXT_HASH_COLUMN && c !== VECTOR_COLUMN);
  return mergeSql(table, spec, values.sql, sets, { insert: false });
}

/** A key as the API shows it: the source driver's value (toSourceValue) as text, like keyText. */
export function readKey(result: QueryResult, row: unknown[], index = 0): string {
  return String(toSourceValue(row[index], result.columns[index]!));
}

export function readMetadata(spec: WarehouseSpec, row: unknown[], from: number): Metadata {
  const metadata: Metadata = {};
  spec.metadata.forEach((c, i) => (metadata[c.name] = readValue(c.type, row[from + i])));
  return metadata;
}

/** The warehouse answers a VECTOR as JSON text (`[1.0e+00,…]`); the SDK passes it through. */
export const readVector = (raw: unknown): Float32Array => parseVectorText(String(raw));

/** The warehouse answers `number of rows …` columns for DML; absent kinds count 0. */
export function dmlCount(result: QueryResult, kind: "inserted" | "updated" | "deleted"): number {
  const i = result.columns.findIndex((c) => c.name.toLowerCase() === `number of rows ${kind}`);
  return i < 0 ? 0 : Number(result.rows[0]?.[i] ?? 0);
}
