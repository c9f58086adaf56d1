// A row's metadata checked against its generation's columns, the same in every store.
import { VectorStoreError } from "./errors.ts";
import type { GenerationSpec, Metadata, MetadataValue } from "./types.ts";

/**
 * A row's metadata in spec order, each value checked against its column type (an unknown column
 * or a mistyped value is `invalid_row`). NaN becomes null: neither SQLite nor Postgres keeps it as
 * a number a filter could match, so say so up front.
 */
export function checkedMetadata(spec: GenerationSpec, metadata: Metadata, pk: string): MetadataValue[] {
  const known = new Set(spec.metadata.map((c) => c.name));
  for (const key of Object.keys(metadata)) {
    if (!known.has(key)) throw new VectorStoreError("invalid_row", `row ${pk}: unknown metadata column "${key}"`);
  }
  return spec.metadata.map((c) => {
    const v = metadata[c.name] ?? null;
    if (v === null) return null;
    const fits =
      c.type === "keyword" ? typeof v === "string"
      : c.type === "integer" ? typeof v === "number" && Number.isSafeInteger(v)
      : c.type === "float" ? typeof v === "number"
      : typeof v === "boolean";
    if (!fits) throw new VectorStoreError("invalid_row", `row ${pk}: metadata "${c.name}" must be ${c.type}, got ${JSON.stringify(v)}`);
    return typeof v === "number" && Number.isNaN(v) ? null : v;
  });
}
