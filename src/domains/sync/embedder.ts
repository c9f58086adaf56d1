// Who embeds a table's rows: the one place the sync engine branches on it (docs/vector-tables.md#built-in-models).
// With an embedding provider, the engine renders each row's text and the provider embeds it; the
// vectors are written by the commit like any other row. With a warehouse built-in model there is
// no provider: the warehouse renders the text from the source table, embeds it and writes the row
// in one statement (embedFromSource), so the text never leaves it; only the metadata the engine
// fetched and rendered goes in. Everything around this step (hash diffs, metadata updates,
// deletions, budget, empty rows, checkpoints, generations) is the same engine.
import type { EmbeddingProvider } from "../../drivers/embeddings/index.ts";
import type { EmbedResult, EmbedRow, SourceText } from "../../drivers/platform/warehouse.ts";
import type { SourceConnector } from "../../drivers/sources/types.ts";
import { WarehouseSource } from "../../drivers/sources/warehouse.ts";
import type { UpsertRow } from "../../drivers/store-api/index.ts";
import { DriverError } from "../../shared/errors.ts";
import { sourceColumn } from "../vector-tables/checks.ts";
import { embeddingColumns } from "../vector-tables/render.ts";
import type { StoreTarget, TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";

export type Embedder =
  | { kind: "provider"; provider: EmbeddingProvider }
  /** `embed` writes the rows itself: blank texts and vanished rows are deleted and reported. */
  | { kind: "platform"; embed(rows: EmbedRow[], target: StoreTarget): Promise<EmbedResult> };

/**
 * The built-in model's embedder of a warehouse platform table: the source table and its columns
 * under the catalog's spelling (the warehouse folds unquoted names), the configuration's tag.
 */
export async function platformEmbedder(store: TableStore, source: SourceConnector, table: VectorTableRow, tag: string): Promise<Embedder> {
  const warehouse = store.warehouse;
  if (!warehouse || !(source instanceof WarehouseSource)) throw new DriverError(`vector table ${table.id} has no embedding provider, and only the warehouse's platform tables embed without one`, { retryable: false });
  const resolved = await source.resolveTable(table.sourceTable);
  const named = (name: string) => sourceColumn(resolved.columns, name, true)?.name ?? name;
  const text: SourceText = {
    table: resolved.sql,
    pk: named(table.primaryKeyColumn),
    columns: embeddingColumns(table.columns).map((c) => ({ name: named(c.name), prefix: c.name_prefix ?? null })),
    tag,
  };
  return { kind: "platform", embed: (rows, target) => warehouse.embedFromSource(text, rows, target) };
}

/** Rows with a new text, embedded: `upserts` for the commit to write, or already written by the platform. */
export type Embedded = { upserts: UpsertRow[]; embedded: number; emptied: { pk: string; textHash: string }[]; deleted: number };

/**
 * Embeds rows whose text changed. A provider gets the rendered texts; a platform embedder gets the
 * keys and metadata (`text` is not read: the engine never fetched it) and reports which rows had
 * no text or no source row any more; those it deleted count as deleted when they were stored.
 */
export async function embedRows(job: { embedder: Embedder; table: VectorTableRow; noteRetry?: (message: string) => void }, rows: UpsertRow[], stored: Set<string>, target: StoreTarget, signal?: AbortSignal): Promise<Embedded> {
  if (rows.length === 0) return { upserts: [], embedded: 0, emptied: [], deleted: 0 };
  const { embedder, table } = job;
  if (embedder.kind === "provider") {
    const vectors = await embedder.provider.embed(rows.map((r) => r.text), { model: table.embeddingModel, dimensions: table.embeddingDimensions, kind: "document", signal, onRetry: job.noteRetry });
    return { upserts: rows.map((r, i) => ({ ...r, vector: vectors[i]! })), embedded: rows.length, emptied: [], deleted: 0 };
  }
  signal?.throwIfAborted();
  const result = await embedder.embed(rows.map((r) => ({ pk: r.pk, metaHash: r.metaHash, metadata: r.metadata })), target);
  const gone = [...result.empty.map((e) => e.pk), ...result.missing].filter((pk) => stored.has(pk));
  return { upserts: [], embedded: result.embedded.length, emptied: result.empty, deleted: gone.length };
}
