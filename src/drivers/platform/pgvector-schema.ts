// Names and DDL of pgvector platform tables. One table per generation in the schema `vecsync`:
//   live:      vecsync.<base>            (the `platform_vector_ref` names it)
//   building:  vecsync.<base>__g<n>      (a re-backfill fills it, then it is renamed to <base>)
// Each table's COMMENT holds `{ref, generation, spec}` as JSON, so the spec travels with the table
// through the rename and a generation needs no registry table beside it.
import { VectorStoreError, type GenerationSpec } from "../vector-store/index.ts";
import { metadataColumn, PG_TYPES } from "./filters-pg.ts";

export const PLATFORM_SCHEMA = "vecsync";

/**
 * Postgres names are at most 63 bytes. The base is ≤ 42 characters, which leaves room for
 * `__g<n>` and index suffixes (`_m49`, `_hnsw`) up to a nine-digit generation.
 */
const BASE_PATTERN = /^[a-z][a-z0-9_]{0,41}$/;
const SLUG_MAX = 30;

/** `vecsync.vt_<first 8 of id>_<name: lowercased, outside [a-z0-9_] → _, at most 30 chars>`. */
export function platformVectorRef(id: string, name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(0, SLUG_MAX);
  return `${PLATFORM_SCHEMA}.vt_${id.slice(0, 8).toLowerCase()}_${slug}`;
}

/** The base table name of a ref; refuses anything that is not one of ours. */
export function baseOf(ref: string): string {
  const [schema, base, extra] = ref.split(".");
  if (schema !== PLATFORM_SCHEMA || base === undefined || extra !== undefined || !BASE_PATTERN.test(base) || /__g\d+$/.test(base)) {
    throw new VectorStoreError("invalid_name", `platform vector ref must look like ${PLATFORM_SCHEMA}.vt_<id8>_<name>: ${JSON.stringify(ref)}`);
  }
  return base;
}

export const buildingTable = (base: string, generation: number): string => `${base}__g${generation}`;

/** Every identifier we emit is [a-z0-9_]; quoting still keeps a mistake from becoming SQL. */
export const quoteIdent = (id: string): string => `"${id.replaceAll('"', '""')}"`;
export const qualified = (table: string): string => `${PLATFORM_SCHEMA}.${quoteIdent(table)}`;

/** pgvector's HNSW indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000. */
export type IndexKind = "vector" | "halfvec" | "none";

export function indexKind(dimensions: number): IndexKind {
  return dimensions <= 2000 ? "vector" : dimensions <= 4000 ? "halfvec" : "none";
}

/** The expression the HNSW index is built on and searches order by. */
export function indexedExpression(dimensions: number): string {
  return indexKind(dimensions) === "halfvec" ? `(embedding::halfvec(${dimensions}))` : "embedding";
}

/** The query vector placeholder `$n` as the indexed expression's type. */
export function queryVector(dimensions: number, placeholder: string): string {
  return indexKind(dimensions) === "halfvec" ? `(${placeholder}::halfvec(${dimensions}))` : `${placeholder}::vector(${dimensions})`;
}

export interface TableComment {
  ref: string;
  generation: number;
  spec: GenerationSpec;
}

export function assertSpec(spec: GenerationSpec): void {
  if (!Number.isSafeInteger(spec.dimensions) || spec.dimensions < 1 || spec.dimensions > 16000) {
    throw new VectorStoreError("invalid_row", `dimensions must be 1-16000 (pgvector), got ${spec.dimensions}`);
  }
}

/** CREATE TABLE, its indexes and its comment, for one generation table. */
export function createTableStatements(table: string, comment: TableComment): string[] {
  const { spec, generation } = comment;
  const prefix = `${comment.ref.split(".")[1]}__g${generation}`;
  const metaColumns = spec.metadata.map((c, i) => `, ${metadataColumn(i)} ${PG_TYPES[c.type]}`).join("");
  const kind = indexKind(spec.dimensions);
  const statements = [
    `CREATE TABLE ${qualified(table)} (
      pk text COLLATE "C" NOT NULL,
      text_hash text NOT NULL,
      meta_hash text NOT NULL,
      text text NOT NULL${metaColumns},
      embedding vector(${spec.dimensions}) NOT NULL,
      CONSTRAINT ${quoteIdent(`${prefix}_pk`)} PRIMARY KEY (pk)
    )`,
    ...spec.metadata.map((_, i) => `CREATE INDEX ${quoteIdent(`${prefix}_m${i}`)} ON ${qualified(table)} (${metadataColumn(i)})`),
  ];
  if (kind !== "none") {
    statements.push(`CREATE INDEX ${quoteIdent(`${prefix}_hnsw`)} ON ${qualified(table)} USING hnsw (${indexedExpression(spec.dimensions)} ${kind}_cosine_ops)`);
  }
  statements.push(`COMMENT ON TABLE ${qualified(table)} IS ${quoteLiteral(JSON.stringify(comment))}`);
  return statements;
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A LIKE pattern matching `<base>__g<anything>` literally (`_` is a LIKE wildcard). */
export function buildingPattern(base: string): string {
  return `${base.replaceAll("_", "\\_")}\\_\\_g%`;
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

export function sameSpec(a: GenerationSpec, b: GenerationSpec): boolean {
  const cols = (s: GenerationSpec) => JSON.stringify(s.metadata.map((c) => [c.name, c.type]));
  return a.dimensions === b.dimensions && a.numericPk === b.numericPk && cols(a) === cols(b);
}
