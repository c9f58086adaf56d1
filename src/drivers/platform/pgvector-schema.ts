// Names and DDL of pgvector platform tables (docs/vector-tables.md#platform-tables). One table per
// generation in the schema `vecsync`:
//   live:      vecsync.vt_<id8>_<name>   (the `platform_vector_ref` names it; users JOIN it)
//   building:  vecsync."vt_<id8>$g<n>"   (a re-backfill fills it, then it is renamed to the live name)
// Columns (CONTRACT 12): the primary key under the source's own name and type, `embedded_text`,
// each metadata column under its own name, `embedding vector(d)` (`halfvec(d)` above 2,000
// dimensions), and two hash columns the sync engine diffs against. Each table's COMMENT holds
// `{ref, generation, spec}` as JSON, so the spec travels with the table through the rename and a
// generation needs no registry table beside it.
import { VectorStoreError } from "../store-api/index.ts";
import { PG_TYPES } from "./filters-pg.ts";
import type { PlatformPrimaryKey, PlatformTableSpec } from "./types.ts";

export const PLATFORM_SCHEMA = "vecsync";

/** Postgres names are at most 63 bytes: `vt_` + 8 + `_` leaves 51 for the name. */
const NAME_MAX = 51;
const BASE_PATTERN = new RegExp(`^vt_[a-z0-9]{8}_[a-z0-9_]{1,${NAME_MAX}}$`);

/** The columns vecsync itself writes; no source column may take these names. */
export const TEXT_COLUMN = "embedded_text";
export const VECTOR_COLUMN = "embedding";
export const TEXT_HASH_COLUMN = "vecsync_text_hash";
export const META_HASH_COLUMN = "vecsync_meta_hash";
/** A row's words and their counts (jsonb), and its length in words: BM25's tf and dl (pgvector-keyword.ts). */
export const TERMS_COLUMN = "vecsync_terms";
export const LENGTH_COLUMN = "vecsync_length";
export const RESERVED_COLUMNS: readonly string[] = [TEXT_COLUMN, VECTOR_COLUMN, TEXT_HASH_COLUMN, META_HASH_COLUMN, TERMS_COLUMN, LENGTH_COLUMN];

/** Without a source key (tests, benchmarks): a text key named `pk`. */
export const DEFAULT_PRIMARY_KEY: PlatformPrimaryKey = { name: "pk", type: "text" };

export const primaryKeyOf = (spec: PlatformTableSpec): PlatformPrimaryKey => spec.primaryKey ?? DEFAULT_PRIMARY_KEY;

/**
 * `vecsync.vt_<first 8 of id>_<name: lowercased, outside [a-z0-9_] → _>` as CONTRACT 12 names it,
 * the name cut to 51 characters so the table name fits Postgres's 63 bytes.
 */
export function platformVectorRef(id: string, name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(0, NAME_MAX);
  return `${PLATFORM_SCHEMA}.vt_${id.slice(0, 8).toLowerCase()}_${slug}`;
}

/** The live table name of a ref; refuses anything that is not one of ours. */
export function baseOf(ref: string): string {
  const [schema, base, extra] = ref.split(".");
  if (schema !== PLATFORM_SCHEMA || base === undefined || extra !== undefined || !BASE_PATTERN.test(base)) {
    throw new VectorStoreError("invalid_name", `platform vector ref must look like ${PLATFORM_SCHEMA}.vt_<id8>_<name>: ${JSON.stringify(ref)}`);
  }
  return base;
}

/** `vt_<id8>`: what every table and index name of one vector table starts with. */
export const familyPrefix = (base: string): string => base.slice(0, 11);

/**
 * A building generation's table. `$` cannot occur in a live name (whose name part is [a-z0-9_]),
 * so no vector table's name can collide with another's building table or indexes.
 */
export const buildingTable = (base: string, generation: number): string => `${familyPrefix(base)}$g${generation}`;

/** A LIKE pattern matching the family's building tables (`_` is a LIKE wildcard). */
export function buildingPattern(base: string): string {
  return `${familyPrefix(base).replaceAll("_", "\\_")}$g%`;
}

export const quoteIdent = (id: string): string => `"${id.replaceAll('"', '""')}"`;
export const qualified = (table: string): string => `${PLATFORM_SCHEMA}.${quoteIdent(table)}`;

/** pgvector's HNSW indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000. */
export type VectorKind = "vector" | "halfvec";

export const vectorKind = (dimensions: number): VectorKind => (dimensions <= 2000 ? "vector" : "halfvec");
export const indexable = (dimensions: number): boolean => dimensions <= 4000;

/** The column's type, which is also the cast of a query vector placeholder. */
export const vectorType = (dimensions: number): string => `${vectorKind(dimensions)}(${dimensions})`;

export interface TableComment {
  ref: string;
  generation: number;
  spec: PlatformTableSpec;
  /**
   * The table has the keyword columns and its term statistics beside it (pgvector-keyword.ts).
   * Absent on tables made before keyword search, which are given them at their next settle.
   */
  keyword?: true;
}

/** Names a platform table cannot hold (CONTRACT 12 puts every column under its own name). */
export function specProblems(spec: PlatformTableSpec): string[] {
  const problems: string[] = [];
  const pk = primaryKeyOf(spec).name;
  if (RESERVED_COLUMNS.includes(pk)) problems.push(`the primary key column "${pk}" has a name the platform table uses itself (${RESERVED_COLUMNS.join(", ")})`);
  for (const c of spec.metadata) {
    if (RESERVED_COLUMNS.includes(c.name)) problems.push(`the metadata column "${c.name}" has a name the platform table uses itself (${RESERVED_COLUMNS.join(", ")})`);
    if (c.name === pk) problems.push(`the metadata column "${c.name}" is the primary key, which the platform table already holds under that name`);
    if (Buffer.byteLength(c.name) > 63) problems.push(`the metadata column "${c.name}" is longer than Postgres's 63-byte names`);
  }
  return problems;
}

export function assertSpec(spec: PlatformTableSpec): void {
  if (!Number.isSafeInteger(spec.dimensions) || spec.dimensions < 1 || spec.dimensions > 16000) {
    throw new VectorStoreError("invalid_row", `dimensions must be 1-16000 (pgvector), got ${spec.dimensions}`);
  }
  const problems = specProblems(spec);
  if (problems.length > 0) throw new VectorStoreError("invalid_name", problems.join("; "));
}

/** CREATE TABLE, its indexes and its comment, for one generation table (with keyword columns: pgvector-keyword.ts adds the rest). */
export function createTableStatements(table: string, comment: TableComment, opts: { vectorIndex: boolean }): string[] {
  const { spec, generation } = comment;
  const prefix = `${familyPrefix(table)}$g${generation}`;
  const pk = primaryKeyOf(spec);
  const metaColumns = spec.metadata.map((c) => `,\n      ${quoteIdent(c.name)} ${PG_TYPES[c.type]}`).join("");
  const statements = [
    `CREATE TABLE ${qualified(table)} (
      ${quoteIdent(pk.name)} ${pk.type} NOT NULL,
      ${TEXT_COLUMN} text NOT NULL${metaColumns},
      ${VECTOR_COLUMN} ${vectorType(spec.dimensions)} NOT NULL,
      ${TEXT_HASH_COLUMN} text NOT NULL,
      ${META_HASH_COLUMN} text NOT NULL,${comment.keyword ? `\n      ${TERMS_COLUMN} jsonb NOT NULL,\n      ${LENGTH_COLUMN} integer NOT NULL,` : ""}
      CONSTRAINT ${quoteIdent(`${prefix}$pk`)} PRIMARY KEY (${quoteIdent(pk.name)})
    )`,
    ...spec.metadata.map((c, i) => `CREATE INDEX ${quoteIdent(`${prefix}$m${i}`)} ON ${qualified(table)} (${quoteIdent(c.name)})`),
  ];
  if (opts.vectorIndex) {
    const index = createVectorIndex(table, generation, spec.dimensions);
    if (index) statements.push(index);
  }
  statements.push(`COMMENT ON TABLE ${qualified(table)} IS ${quoteLiteral(JSON.stringify(comment))}`);
  return statements;
}

/** The HNSW index (cosine) of a generation table; null past pgvector's 4,000 indexable dimensions. */
export function createVectorIndex(table: string, generation: number, dimensions: number): string | null {
  if (!indexable(dimensions)) return null;
  const name = `${familyPrefix(table)}$g${generation}$hnsw`;
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${qualified(table)} USING hnsw (${VECTOR_COLUMN} ${vectorKind(dimensions)}_cosine_ops)`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
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

export function sameSpec(a: PlatformTableSpec, b: PlatformTableSpec): boolean {
  const cols = (s: PlatformTableSpec) => JSON.stringify(s.metadata.map((c) => [c.name, c.type]));
  const pk = (s: PlatformTableSpec) => JSON.stringify(primaryKeyOf(s));
  return a.dimensions === b.dimensions && a.numericPk === b.numericPk && cols(a) === cols(b) && pk(a) === pk(b);
}

/** A generation table's columns as SQL: what every statement on it is built from. */
export interface Layout {
  /** The key column, quoted. */
  pk: string;
  /** `$n` as the key column's type (bound as text, cast in SQL). */
  pkParam(n: number): string;
  /** `SELECT jsonb_array_elements_text($n)` as the key column's type: a list of keys in one parameter. */
  pkList(n: number): string;
  /** Metadata column `i`, quoted. */
  meta(i: number): string;
  /** `$n` as the vector column's type. */
  vectorParam(n: number): string;
}

export function layoutOf(spec: PlatformTableSpec): Layout {
  const pk = primaryKeyOf(spec);
  const names = spec.metadata.map((c) => quoteIdent(c.name));
  return {
    pk: quoteIdent(pk.name),
    pkParam: (n) => `$${n}::text::${pk.type}`,
    pkList: (n) => `SELECT (jsonb_array_elements_text($${n}::text::jsonb))::${pk.type}`,
    meta: (i) => names[i]!,
    vectorParam: (n) => `$${n}::text::${vectorType(spec.dimensions)}`,
  };
}
