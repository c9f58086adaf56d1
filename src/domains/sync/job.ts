// Everything one sync operation on a vector table needs, opened once: the table row, its source,
// its embedding provider, and the column lists and tag derived from its configuration.
import type { Services } from "../../services.ts";
import { openSource } from "../connections/sources.ts";
import type { CdcTarget, SourceConnector } from "../../drivers/sources/types.ts";
import type { GenerationSpec } from "../../drivers/store-api/index.ts";
import { DriverError } from "../../shared/errors.ts";
import { findConnection } from "../connections/repo.ts";
import { providerForEmbedding } from "../embedding-providers/embedding.ts";
import { embeddingColumns, embeddingTag, generationSpec, metadataColumns } from "../vector-tables/render.ts";
import { platformKey, tableStore, type TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { platformEmbedder, type Embedder } from "./embedder.ts";
import { noteError } from "../vector-tables/state.ts";

export type SyncJob = {
  services: Services;
  table: VectorTableRow;
  source: SourceConnector;
  /** Who embeds: the table's provider, or the warehouse's built-in model (embedder.ts). */
  embedder: Embedder;
  /** Where the table's vectors live (a managed collection or a platform table). */
  store: TableStore;
  /** The source columns hashed as text, in embedding order, and as metadata. */
  textColumns: string[];
  metaColumns: string[];
  /** The columns read to render a row: every configured one, or only the metadata when the platform renders the text. */
  columns: string[];
  tag: string;
  spec: GenerationSpec;
  /**
   * The provider failed an attempt and tries again: `last_error` says what it answered while the
   * work waits (at most once a second), so a table whose changes cannot be applied never reads
   * clean for the whole retry (CONTRACT 11). A success later clears it, as it clears any error.
   */
  noteRetry(message: string): void;
  /** Whether noteRetry wrote since this was last reset (a stream clears its note once a batch is applied). */
  retryNoted: { value: boolean };
  close(): Promise<void>;
};

export const cdcTarget = (table: VectorTableRow): CdcTarget => ({ stream: table.id, table: table.sourceTable, pk: [table.primaryKeyColumn] });

export async function openTableSource(services: Services, table: VectorTableRow): Promise<SourceConnector> {
  const connection = await findConnection(services.database.db, table.orgId, table.connectionId);
  if (!connection) throw new DriverError(`the connection ${table.connectionId} of vector table ${table.id} no longer exists`, { retryable: false });
  return openSource(services, connection);
}

/**
 * Opens storage, source and embedder for the table; the caller closes the job. Without an
 * embedding provider the table uses a warehouse built-in model (docs/vector-tables.md#built-in-models).
 */
export async function openJob(services: Services, table: VectorTableRow): Promise<SyncJob> {
  // First: a platform without a store in this build says so before anything else is opened.
  const store = await tableStore(services, table);
  const provider = table.embeddingProviderId ? await providerForEmbedding(services, table.orgId, table.embeddingProviderId) : null;
  const source = await openTableSource(services, table);
  const close = () => source.close().catch(() => {});
  const tag = embeddingTag(table.embeddingModel, table.embeddingDimensions, table.columns);
  let embedder: Embedder;
  try {
    embedder = provider ? { kind: "provider", provider } : await platformEmbedder(store, source, table, tag);
  } catch (err) {
    await close();
    throw err;
  }
  const text = embeddingColumns(table.columns).map((c) => c.name);
  const meta = metadataColumns(table.columns).map((c) => c.name);
  return {
    services,
    table,
    source,
    embedder,
    store,
    textColumns: text,
    metaColumns: meta,
    // A platform embedder renders the text in the warehouse: the engine never reads it.
    columns: embedder.kind === "platform" ? meta : [...new Set([...text, ...meta])],
    tag,
    spec: generationSpec(table),
    ...retryNoter(services, table.id),
    close,
  };
}

/** RETRY_NOTE_MS apart at most: a burst of failed attempts is one write. */
const RETRY_NOTE_MS = 1000;

function retryNoter(services: Services, tableId: string): Pick<SyncJob, "noteRetry" | "retryNoted"> {
  let last = -Infinity;
  const retryNoted = { value: false };
  const noteRetry = (message: string) => {
    const now = services.clock.now();
    if (now.getTime() - last < RETRY_NOTE_MS) return;
    last = now.getTime();
    retryNoted.value = true;
    void noteError(services.database.db, tableId, `${message} (retrying)`, now.toISOString()).catch((err) => services.logger.warn({ err, vector_table_id: tableId }, "could not record a provider retry"));
  };
  return { noteRetry, retryNoted };
}

/**
 * A platform table made if it is missing (its creation made it; a user may have dropped it since):
 * the key column repeats the source's, so its type is read from the source now. A managed
 * collection is made at creation and never missing.
 */
export async function ensureStorage(job: SyncJob): Promise<void> {
  if (job.store.mode !== "platform" || (await job.store.exists())) return;
  const { table } = job;
  const schema = await job.source.describeTable(table.sourceTable);
  const pk = schema.find((c) => c.name === table.primaryKeyColumn) ?? schema.find((c) => c.name.toLowerCase() === table.primaryKeyColumn.toLowerCase());
  if (!pk) throw new DriverError(`the source table "${table.sourceTable}" no longer has the primary key column "${table.primaryKeyColumn}"`, { retryable: false });
  await job.store.create({ ...job.spec, primaryKey: await platformKey(job.store, job.source, table.sourceTable, pk) });
}
