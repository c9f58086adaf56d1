// The rules a vector table's configuration must meet (docs/vector-tables.md#vector-tables), as lists of
// `{path, message}` problems so one 400 answer names everything wrong at once.
import { validateModelChoice } from "../../drivers/embeddings/catalog.ts";
import type { SourceColumn } from "../../drivers/sources/types.ts";
import type { ErrorDetail } from "../../shared/errors.ts";
import type { ColumnConfig } from "./tables.ts";

/** Role rules of the column list; independent of the source. */
export function columnProblems(columns: ColumnConfig[]): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (!columns.some((c) => c.role === "embedding")) problems.push({ path: "columns", message: "at least one column must have the role embedding" });
  const seen = new Set<string>();
  columns.forEach((c, i) => {
    const at = `columns.${i}`;
    if (seen.has(c.name)) problems.push({ path: `${at}.name`, message: `column "${c.name}" is listed more than once` });
    seen.add(c.name);
    if (c.role === "metadata") {
      if (c.filter_type === undefined) problems.push({ path: `${at}.filter_type`, message: "is required for metadata columns (keyword, integer, float or boolean)" });
      // Only embedding columns are rendered into text: an ordinal or prefix here would do nothing.
      if (c.ordinal !== undefined) problems.push({ path: `${at}.ordinal`, message: "applies to embedding columns only" });
      if (c.name_prefix !== undefined) problems.push({ path: `${at}.name_prefix`, message: "applies to embedding columns only" });
    } else if (c.filter_type !== undefined) {
      problems.push({ path: `${at}.filter_type`, message: "applies to metadata columns only (an embedding column cannot be filtered on)" });
    }
  });
  return problems;
}

/**
 * The source column a configured name refers to. Postgres names are case-sensitive; the warehouse
 * folds unquoted names to upper case, so there a case-insensitive match is the same column.
 */
export function sourceColumn(schema: SourceColumn[], name: string, foldCase: boolean): SourceColumn | undefined {
  return schema.find((c) => c.name === name) ?? (foldCase ? schema.find((c) => c.name.toLowerCase() === name.toLowerCase()) : undefined);
}

/** Every configured column, and the primary key, must exist in the source table. */
export function sourceProblems(schema: SourceColumn[], table: string, primaryKey: string | undefined, columns: ColumnConfig[] | undefined, foldCase: boolean): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const missing = (name: string) => `the source table "${table}" has no column "${name}"`;
  if (primaryKey !== undefined && !sourceColumn(schema, primaryKey, foldCase)) problems.push({ path: "primary_key_column", message: missing(primaryKey) });
  columns?.forEach((c, i) => {
    if (!sourceColumn(schema, c.name, foldCase)) problems.push({ path: `columns.${i}.name`, message: missing(c.name) });
  });
  return problems;
}

/**
 * The warehouse platform's own embedding functions, usable in platform mode without an embedding
 * provider (docs/vector-tables.md#storage-modes leaves their names out; these are the two the warehouse ships for 768-wide
 * vectors). Their dimensions are fixed.
 */
export const PLATFORM_BUILT_IN_MODELS: readonly { model: string; dimensions: number }[] = [
  { model: "snowflake-arctic-embed-m", dimensions: 768 },
  { model: "e5-base-v2", dimensions: 768 },
];

/** Model and dimensions against the provider's catalog, reported at the request's field names. */
export function modelProblems(providerKind: string, model: string, dimensions: number): ErrorDetail[] {
  const rename: Record<string, string> = { model: "embedding_model", dimensions: "embedding_dimensions", provider: "embedding_provider_id" };
  return validateModelChoice(providerKind, model, dimensions).map((p) => ({ path: rename[p.path] ?? p.path, message: p.message }));
}

/** Model and dimensions of a platform-mode warehouse table that embeds with the platform itself. */
export function builtInModelProblems(model: string, dimensions: number): ErrorDetail[] {
  const spec = PLATFORM_BUILT_IN_MODELS.find((m) => m.model === model);
  if (!spec) {
    const names = PLATFORM_BUILT_IN_MODELS.map((m) => m.model).join(", ");
    return [{ path: "embedding_model", message: `without an embedding provider the model must be one of the platform's built-in models: ${names}` }];
  }
  if (dimensions !== spec.dimensions) return [{ path: "embedding_dimensions", message: `${model} produces exactly ${spec.dimensions} dimensions, not ${dimensions}` }];
  return [];
}

// Postgres `format_type()` spellings and warehouse DATA_TYPE names of numeric types.
const NUMERIC_TYPE = /^(smallint|integer|bigint|int|int2|int4|int8|tinyint|byteint|numeric|decimal|number|real|float\d*|double( precision)?|smallserial|serial|bigserial|oid)\b/i;

/** Whether the key's source type orders numerically (ties in query scores break by it, docs/vector-tables.md#ranking-and-ties). */
export const isNumericType = (sourceType: string): boolean => NUMERIC_TYPE.test(sourceType.trim());
