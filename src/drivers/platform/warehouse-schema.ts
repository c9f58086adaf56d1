// Names, columns and DDL of the warehouse's platform tables (docs/platform-warehouse.md). One
// table per generation in the schema VECSYNC of the connection's database:
//   live:      <DB>.VECSYNC.VT_<ID8>_<NAME>          (the `platform_vector_ref` names it)
//   building:  <DB>.VECSYNC.VT_<ID8>_<NAME>__G<n>    (a re-backfill fills it, then SWAP WITH)
// Each table's COMMENT holds `{ref, generation, spec}` as JSON: SWAP WITH exchanges the two
// tables' names, so the comment stays with the rows it describes and no registry table is needed.
import { VectorStoreError, type GenerationSpec, type MetadataType } from "../store-api/index.ts";
import { parseComment as parsePgComment } from "./pgvector-schema.ts";

export const PLATFORM_SCHEMA = "VECSYNC";

/** The source table's key column, repeated by the platform table (CONTRACT 12: same name, same type). */
export interface WarehouseKeyColumn {
  name: string;
  /** A warehouse type: `NUMBER(38,0)`, `VARCHAR`, `DATE`… (WarehouseVectorStore.keyColumn reads it exactly). */
  type: string;
}

/** A generation's shape; without `primaryKey` the key is `PK VARCHAR`. (PlatformTableSpec's shape.) */
export interface WarehouseSpec extends GenerationSpec {
  primaryKey?: WarehouseKeyColumn;
}

export interface TableComment {
  ref: string;
  generation: number;
  spec: WarehouseSpec;
}

/** Our own columns. The hash columns carry the prefix so they cannot meet a customer's column name. */
export const TEXT_COLUMN = "EMBEDDED_TEXT";
export const VECTOR_COLUMN = "EMBEDDING";
export const TEXT_HASH_COLUMN = "VECSYNC_TEXT_HASH";
export const META_HASH_COLUMN = "VECSYNC_META_HASH";

/** Warehouse type of each metadata type (docs/platform-warehouse.md: CONTRACT 12's mapping in this dialect). */
export const WAREHOUSE_TYPES: Record<MetadataType, string> = { keyword: "VARCHAR", integer: "NUMBER(38,0)", float: "FLOAT", boolean: "BOOLEAN" };

/** Snowflake VECTOR holds at most 4,096 elements. */
const MAX_DIMENSIONS = 4096;
const BASE_PATTERN = /^VT_[A-Z0-9_]+$/;

/** `<DB>.VECSYNC.VT_<first 8 of id>_<name: upper-cased, outside [A-Z0-9_] → _>`. */
export function warehouseVectorRef(database: string, id: string, name: string): string {
  const slug = name.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  return `${database}.${PLATFORM_SCHEMA}.VT_${id.slice(0, 8).toUpperCase()}_${slug}`;
}

export interface ParsedRef {
  database: string;
  base: string;
}

/** The database and base table of a ref; refuses anything that is not one of ours. */
export function parseRef(ref: string): ParsedRef {
  const parts = ref.split(".");
  const [database, schema, base] = parts;
  if (parts.length !== 3 || !database || database.includes('"') || schema !== PLATFORM_SCHEMA || !base || !BASE_PATTERN.test(base) || /__G\d+$/.test(base)) {
    throw new VectorStoreError("invalid_name", `platform vector ref must look like <database>.${PLATFORM_SCHEMA}.VT_<ID8>_<NAME>: ${JSON.stringify(ref)}`);
  }
  return { database, base };
}

export const buildingTable = (base: string, generation: number): string => `${base}__G${generation}`;

/** Quoted, so a name is taken exactly as written (the catalog's spelling). */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
export const tableSql = (ref: ParsedRef, table: string): string => [ref.database, PLATFORM_SCHEMA, table].map(quoteIdent).join(".");
export const schemaSql = (ref: ParsedRef): string => [ref.database, PLATFORM_SCHEMA].map(quoteIdent).join(".");

/** A string literal; the warehouse reads backslash escapes inside single quotes, so those double too. */
export const quoteLiteral = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;

export const RESERVED_COLUMNS: readonly string[] = [TEXT_COLUMN, VECTOR_COLUMN, TEXT_HASH_COLUMN, META_HASH_COLUMN];
/** The warehouse's identifiers are at most 255 characters. */
const NAME_MAX = 255;
/** Key types kept as the source has them; anything else (a bare NUMBER of unknown scale, timestamps…) is stored as its text. */
const EXACT_KEY_TYPE = /^(NUMBER|NUMERIC|DECIMAL)\s*\(\s*\d+\s*,\s*\d+\s*\)$|^(INT|INTEGER|BIGINT|SMALLINT|TINYINT|BYTEINT|VARCHAR|TEXT|STRING|DATE|BOOLEAN)$|^VARCHAR\s*\(\s*\d+\s*\)$/i;

/** The column names and key type of one generation table; metadata columns keep their own names. */
export interface Layout {
  pk: string;
  pkType: string;
  meta: string[];
}

/**
 * The key keeps its source type when that type makes the same key text back (keyText): NUMBER
 * with its precision and scale, integers, text, dates. A bare NUMBER (the catalog's DATA_TYPE
 * without NUMERIC_SCALE) could round `2.50`, so such keys, and types whose text the driver
 * reformats (timestamps), are stored as VARCHAR: still joinable, never lossy.
 */
export function layoutOf(spec: WarehouseSpec): Layout {
  const key = spec.primaryKey;
  const pkType = key && EXACT_KEY_TYPE.test(key.type.trim()) ? key.type.trim().toUpperCase().replace(/\s+/g, "").replace(/^(TEXT|STRING)$/, "VARCHAR") : "VARCHAR";
  return { pk: key?.name ?? "PK", pkType, meta: spec.metadata.map((c) => c.name) };
}

/**
 * Problems a spec has on the warehouse, before anything is created. Names are compared without
 * case: unquoted they fold to upper case, and with QUOTED_IDENTIFIERS_IGNORE_CASE so do quoted ones.
 */
export function specProblems(spec: WarehouseSpec): string[] {
  const problems: string[] = [];
  const same = (a: string, b: string) => a.toUpperCase() === b.toUpperCase();
  const pk = layoutOf(spec).pk;
  const ours = RESERVED_COLUMNS.join(", ");
  if (!Number.isSafeInteger(spec.dimensions) || spec.dimensions < 1 || spec.dimensions > MAX_DIMENSIONS) {
    problems.push(`the warehouse's VECTOR type holds 1-${MAX_DIMENSIONS} dimensions, not ${spec.dimensions}`);
  }
  if (RESERVED_COLUMNS.some((r) => same(r, pk))) problems.push(`the primary key column "${pk}" has a name the platform table uses itself (${ours})`);
  for (const [i, c] of spec.metadata.entries()) {
    if (RESERVED_COLUMNS.some((r) => same(r, c.name))) problems.push(`the metadata column "${c.name}" has a name the platform table uses itself (${ours})`);
    if (same(c.name, pk)) problems.push(`the metadata column "${c.name}" is the primary key, which the platform table already holds under that name`);
    if (spec.metadata.findIndex((d) => same(d.name, c.name)) < i) problems.push(`the metadata column "${c.name}" differs from another only in case, which the warehouse may not tell apart`);
  }
  for (const name of [pk, ...spec.metadata.map((c) => c.name)]) if (name.length === 0 || name.length > NAME_MAX) problems.push(`the column name "${name}" must be 1-${NAME_MAX} characters`);
  return problems;
}

export function assertSpec(spec: WarehouseSpec): void {
  if (!Number.isSafeInteger(spec.dimensions) || spec.dimensions < 1 || spec.dimensions > MAX_DIMENSIONS) {
    throw new VectorStoreError("invalid_row", `dimensions must be 1-${MAX_DIMENSIONS} (the warehouse's VECTOR type), got ${spec.dimensions}`);
  }
  const problems = specProblems(spec);
  if (problems.length > 0) throw new VectorStoreError("invalid_name", problems.join("; "));
}

/** One statement: the table and its comment together, so no table ever lacks its spec. */
export function createTableSql(table: string, comment: TableComment): string {
  const { spec } = comment;
  const layout = layoutOf(spec);
  const columns = [
    `${quoteIdent(layout.pk)} ${layout.pkType} NOT NULL`,
    `${quoteIdent(TEXT_COLUMN)} VARCHAR NOT NULL`,
    ...spec.metadata.map((c) => `${quoteIdent(c.name)} ${WAREHOUSE_TYPES[c.type]}`),
    `${quoteIdent(VECTOR_COLUMN)} VECTOR(FLOAT, ${spec.dimensions}) NOT NULL`,
    `${quoteIdent(TEXT_HASH_COLUMN)} VARCHAR NOT NULL`,
    `${quoteIdent(META_HASH_COLUMN)} VARCHAR NOT NULL`,
  ];
  return `CREATE TABLE ${table} (${columns.join(", ")}) COMMENT = ${quoteLiteral(JSON.stringify(comment))}`;
}

/** The comment is pgvector's `{ref, generation, spec}` JSON: one reader for both platforms. */
export const parseComment = (text: unknown): TableComment | null => parsePgComment(text) as TableComment | null;

export function sameSpec(a: WarehouseSpec, b: WarehouseSpec): boolean {
  const shape = (s: WarehouseSpec) => JSON.stringify([s.dimensions, s.numericPk, s.metadata.map((c) => [c.name, c.type]), layoutOf(s).pk, layoutOf(s).pkType]);
  return shape(a) === shape(b);
}
