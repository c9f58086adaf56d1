// Everything one sync operation on a vector table needs, opened once: the table row, its source,
// its embedding provider, and the column lists and tag derived from its configuration.
import type { Services } from "../../services.ts";
import type { EmbeddingProvider } from "../../drivers/embeddings/index.ts";
import { openSource } from "../connections/sources.ts";
import type { CdcTarget, SourceConnector } from "../../drivers/sources/types.ts";
import type { GenerationSpec } from "../../drivers/vector-store/index.ts";
import { DriverError } from "../../shared/errors.ts";
import { findConnection } from "../connections/repo.ts";
import { providerForEmbedding } from "../embedding-providers/embedding.ts";
import { embeddingColumns, embeddingTag, generationSpec, metadataColumns } from "../vector-tables/render.ts";
import { tableStore, type TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";

export type SyncJob = {
  services: Services;
  table: VectorTableRow;
  source: SourceConnector;
  provider: EmbeddingProvider;
  /** Where the table's vectors live (a managed collection or a platform table). */
  store: TableStore;
  /** The source columns hashed as text, in embedding order, and as metadata. */
  textColumns: string[];
  metaColumns: string[];
  /** Every configured column, read to render a row. */
  columns: string[];
  tag: string;
  spec: GenerationSpec;
  close(): Promise<void>;
};

export const cdcTarget = (table: VectorTableRow): CdcTarget => ({ stream: table.id, table: table.sourceTable, pk: [table.primaryKeyColumn] });

export async function openTableSource(services: Services, table: VectorTableRow): Promise<SourceConnector> {
  const connection = await findConnection(services.database.db, table.orgId, table.connectionId);
  if (!connection) throw new DriverError(`the connection ${table.connectionId} of vector table ${table.id} no longer exists`, { retryable: false });
  return openSource(services, connection);
}

/** Opens storage, source and provider for the table; the caller closes the job. */
export async function openJob(services: Services, table: VectorTableRow): Promise<SyncJob> {
  // First: a platform without a store in this build says so before anything else is opened.
  const store = await tableStore(services, table);
  if (!table.embeddingProviderId) throw new DriverError(`vector table ${table.id} has no embedding provider`, { retryable: false });
  const provider = await providerForEmbedding(services, table.orgId, table.embeddingProviderId);
  const source = await openTableSource(services, table);
  const text = embeddingColumns(table.columns).map((c) => c.name);
  const meta = metadataColumns(table.columns).map((c) => c.name);
  return {
    services,
    table,
    source,
    provider,
    store,
    textColumns: text,
    metaColumns: meta,
    columns: [...new Set([...text, ...meta])],
    tag: embeddingTag(table.embeddingModel, table.embeddingDimensions, table.columns),
    spec: generationSpec(table),
    close: () => source.close().catch(() => {}),
  };
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
  await job.store.create({ ...job.spec, primaryKey: { name: pk.name, type: pk.type } });
}
