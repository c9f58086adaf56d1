// Names, columns and DDL of the warehouse's platform tables (docs/platform-warehouse.md). One
// table per generation in the schema VECSYNC of the connection's database:
//   live:      <DB>.VECSYNC.VT_<ID8>_<NAME>          (the `platform_vector_ref` names it)
//   building:  <DB>.VECSYNC.VT_<ID8>_<NAME>__G<n>    (a re-backfill fills it, then SWAP WITH)
// Each table's COMMENT holds `{ref, generation, spec}` as JSON: SWAP WITH exchanges the two
// tables' names, so the comment stays with the rows it describes and no registry table is needed.
import { VectorStoreError, type GenerationSpec, type MetadataType } from "../vector-store/index.ts";

export const PLATFORM_SCHEMA = "VECSYNC";

/** The key column of the source table under its own name and type (`NUMBER(38,0)`, `VARCHAR`, …). */
export interface WarehouseKeyColumn {
  name: string;
  type: string;
}

/**
 * A generation's shape. `pk` (from `WarehouseVectorStore.keyColumn`) stores the key under the
 * source's name and type so the table joins with its source; without it the key is `PK VARCHAR`.
 */
export interface WarehouseSpec extends GenerationSpec {
  pk?: WarehouseKeyColumn;
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
const KEY_TYPE = /^[A-Z][A-Z0-9_]*(\s*\(\s*\d+\s*(,\s*\d+\s*)?\))?$/i;

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

/** The column names of one generation table. */
export interface Layout {
  pk: string;
  pkType: string;
  /** Metadata column i's name: its own, or VECSYNC_M<i> when that name is taken. */
  meta: string[];
}

export function layoutOf(spec: WarehouseSpec): Layout {
  // Compared without case: with QUOTED_IDENTIFIERS_IGNORE_CASE set, "price" and "PRICE" are one column.
  const ours = [TEXT_COLUMN, VECTOR_COLUMN, TEXT_HASH_COLUMN, META_HASH_COLUMN];
  const named = spec.pk?.name ?? "PK";
  const pk = ours.includes(named.toUpperCase()) ? "VECSYNC_PK" : named;
  const taken = new Set([pk, ...ours].map((n) => n.toUpperCase()));
  const meta = spec.metadata.map((c, i) => {
    const name = taken.has(c.name.toUpperCase()) ? `VECSYNC_M${i}` : c.name;
    taken.add(name.toUpperCase());
    return name;
  });
  return { pk, pkType: spec.pk?.type ?? "VARCHAR", meta };
}

export function assertSpec(spec: WarehouseSpec): void {
  if (!Number.isSafeInteger(spec.dimensions) || spec.dimensions < 1 || spec.dimensions > MAX_DIMENSIONS) {
    throw new VectorStoreError("invalid_row", `dimensions must be 1-${MAX_DIMENSIONS} (the warehouse's VECTOR type), got ${spec.dimensions}`);
  }
  if (spec.pk && (!spec.pk.name || !KEY_TYPE.test(spec.pk.type))) {
    throw new VectorStoreError("invalid_row", `key column must be a name and a warehouse type such as NUMBER(38,0), got ${JSON.stringify(spec.pk)}`);
  }
}

/** One statement: the table and its comment together, so no table ever lacks its spec. */
export function createTableSql(table: string, comment: TableComment): string {
  const { spec } = comment;
  const layout = layoutOf(spec);
  const columns = [
    `${quoteIdent(layout.pk)} ${layout.pkType} NOT NULL`,
    `${quoteIdent(TEXT_COLUMN)} VARCHAR NOT NULL`,
    ...spec.metadata.map((c, i) => `${quoteIdent(layout.meta[i]!)} ${WAREHOUSE_TYPES[c.type]}`),
    `${quoteIdent(VECTOR_COLUMN)} VECTOR(FLOAT, ${spec.dimensions}) NOT NULL`,
    `${quoteIdent(TEXT_HASH_COLUMN)} VARCHAR NOT NULL`,
    `${quoteIdent(META_HASH_COLUMN)} VARCHAR NOT NULL`,
  ];
  return `CREATE TABLE ${table} (${columns.join(", ")}) COMMENT = ${quoteLiteral(JSON.stringify(comment))}`;
}

export function parseComment(text: unknown): TableComment | null {
  if (typeof text !== "string") return null;
  try {
    const value = JSON.parse(text) as Partial<TableComment>;
    if (typeof value.ref !== "string" || typeof value.generation !== "number" || typeof value.spec !== "object" || value.spec === null) return null;
    return value as TableComment;
  } catch {
    return null;
  }
}

export function sameSpec(a: WarehouseSpec, b: WarehouseSpec): boolean {
  const cols = (s: WarehouseSpec) => JSON.stringify([s.metadata.map((c) => [c.name, c.type]), layoutOf(s).pk, layoutOf(s).pkType.replace(/\s+/g, "").toUpperCase()]);
  return a.dimensions === b.dimensions && a.numericPk === b.numericPk && cols(a) === cols(b);
}
