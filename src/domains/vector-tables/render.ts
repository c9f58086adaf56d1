import { createHash } from "node:crypto";
import type { GenerationSpec, Metadata, MetadataValue } from "../../drivers/store-api/index.ts";
import type { SourceValue } from "../../drivers/sources/types.ts";
import type { ColumnConfig, VectorTableRow } from "./tables.ts";

// What a source row becomes in the collection (docs/vector-tables.md#text-and-metadata). One module, used by backfill, sync
// and tests alike, so the embedded text and typed metadata can never differ between paths.

/** Embedding columns in embedding order: by `ordinal`, then by position in `columns`. */
export function embeddingColumns(columns: ColumnConfig[]): ColumnConfig[] {
  return columns
    .map((c, position) => ({ c, position }))
    .filter(({ c }) => c.role === "embedding")
    .sort((a, b) => (a.c.ordinal ?? Number.MAX_SAFE_INTEGER) - (b.c.ordinal ?? Number.MAX_SAFE_INTEGER) || a.position - b.position)
    .map(({ c }) => c);
}

export const metadataColumns = (columns: ColumnConfig[]): ColumnConfig[] => columns.filter((c) => c.role === "metadata");

const asText = (value: SourceValue): string => (typeof value === "string" ? value : String(value));

/**
 * The text that is embedded: each non-null embedding column as `name_prefix + value`, joined by
 * "\n". Null when every embedding column is null or the text is only blanks (such a row is not
 * embedded, docs/vector-tables.md#text-and-metadata).
 */
export function renderText(columns: ColumnConfig[], values: Record<string, SourceValue>): string | null {
  const parts: string[] = [];
  for (const column of embeddingColumns(columns)) {
    const value = values[column.name];
    if (value === null || value === undefined) continue;
    parts.push((column.name_prefix ?? "") + asText(value));
  }
  const text = parts.join("\n");
  // Only blanks (empty strings, spaces, newlines) is no text: providers refuse such an input, and
  // one refused row would fail a whole backfill. Such a row is stored like one whose columns are null.
  return /\S/.test(text) ? text : null;
}

function typed(type: ColumnConfig["filter_type"], value: SourceValue | undefined): MetadataValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "keyword":
      return asText(value);
    case "integer": {
      const n = typeof value === "number" ? value : Number(value);
      return Number.isSafeInteger(n) ? n : null;
    }
    case "float": {
      const n = typeof value === "number" ? value : Number(value);
      return Number.isFinite(n) ? n : null;
    }
    case "boolean":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === "t" || value === 1) return true;
      if (value === "false" || value === "f" || value === 0) return false;
      return null;
    default:
      return null;
  }
}

/** Every metadata column of the row, typed by its `filter_type` (a value that does not fit → null). */
export function renderMetadata(columns: ColumnConfig[], values: Record<string, SourceValue>): Metadata {
  const out: Metadata = {};
  for (const column of metadataColumns(columns)) out[column.name] = typed(column.filter_type, values[column.name]);
  return out;
}

/**
 * What the stored text hash covers besides the source's own hash of the text columns: the model,
 * the dimensions and the rendering rules (order, prefixes). Any change means re-embedding, so a
 * model change can never leave mixed vectors (docs/architecture.md#batch-sync).
 */
export function embeddingTag(model: string, dimensions: number, columns: ColumnConfig[]): string {
  const rules = embeddingColumns(columns).map((c) => [c.name, c.name_prefix ?? ""]);
  return createHash("sha256").update(JSON.stringify([model, dimensions, rules])).digest("hex").slice(0, 16);
}

/** The text hash stored per row: the source's hash of the embedding columns, bound to the tag. */
export const storedTextHash = (sourceTextHash: string, tag: string): string => `${sourceTextHash}.${tag}`;

/**
 * The store's generation shape for a table's configuration (metadata columns in configuration
 * order): the collection made at creation and every generation a fill builds. columnProblems
 * requires a `filter_type` on every metadata column at creation and on PUT, so the `keyword`
 * default never applies to a stored configuration; it only keeps this total.
 */
export function generationSpec(table: Pick<VectorTableRow, "columns" | "embeddingModel" | "embeddingDimensions" | "numericPk">): GenerationSpec {
  return {
    dimensions: table.embeddingDimensions,
    metadata: metadataColumns(table.columns).map((c) => ({ name: c.name, type: c.filter_type ?? "keyword" })),
    numericPk: table.numericPk,
    model: table.embeddingModel,
  };
}

/** `vt_<first 8 of id>_<name lowercased, anything outside [a-z0-9_] as _>` (docs/vector-tables.md#vector-tables). */
export function collectionName(id: string, name: string): string {
  return `vt_${id.slice(0, 8)}_${name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;
}
