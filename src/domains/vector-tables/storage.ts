// Where a vector table's vectors live, behind one interface (docs/vector-tables.md#storage-modes):
// the managed store's collection, or a table in the customer's platform (a PlatformVectorStore:
// pgvector, the warehouse's VECTOR type). The sync engine and the query service address storage
// by the vector table, never by a collection name, so they are one engine over every mode; each
// implementation passes the same contract suite (test/drivers/platform/contract.ts).
import type { Services } from "../../services.ts";
import { AppError, DriverError, validationError } from "../../shared/errors.ts";
import { PlatformSetupError, type PlatformPrimaryKey, type PlatformTableSpec, type PlatformVectorStore } from "../../drivers/platform/types.ts";
import { WarehouseVectorStore, type EmbedResult, type EmbedRow, type SourceText, type TextSearchRequest } from "../../drivers/platform/warehouse.ts";
import type { VectorStore } from "../../drivers/vector-store/index.ts";
import { VectorStoreError, type MetadataUpdate, type RowHashes, type SearchExplain, type SearchHit, type SearchRequest, type StoredDoc, type UpsertRow } from "../../drivers/store-api/index.ts";
import { WarehouseSource } from "../../drivers/sources/warehouse.ts";
import type { SourceColumn, SourceConnector } from "../../drivers/sources/types.ts";
import { findConnection } from "../connections/repo.ts";
import { openCredentials, secretsOf } from "../connections/credentials.ts";
import { setPlatformVectorRef } from "./repo.ts";
import type { VectorTableRow } from "./tables.ts";

/** A generation's shape; `primaryKey` (the source's key column) shapes platform tables only. */
export type TableSpec = PlatformTableSpec;

/** Which generation a call works on (the live one unless named); `indexLater` is a managed-store hint. */
export type StoreTarget = { generation?: number; indexLater?: boolean; streaming?: boolean };

export type HashesQuery = StoreTarget & { afterPk?: string; limit?: number; pks?: string[] };

/** The live generation held for one query: embed with its `spec`, search it, release it. */
export type TablePin = {
  generation: number;
  spec: TableSpec;
  /**
   * Every hit satisfies the filter (FilterError otherwise); by score, then pk. A platform store
   * whose live generation moved since the pin throws VectorStoreError `generation_not_found`:
   * pin again, embed again. `explain` (req.explain): the managed store's figures; platform stores give none.
   */
  search(req: SearchRequest): Promise<{ hits: SearchHit[]; path: string; explain?: SearchExplain }>;
  /** A built-in model's query (the warehouse's): the text embedded by the platform in the searching statement. */
  searchText?(req: TextSearchRequest): Promise<{ hits: SearchHit[]; path: string }>;
  release(): void;
};

/**
 * What only the warehouse's store does (docs/platform-warehouse.md): embed rows from the source
 * with its built-in models, the text never leaving the warehouse, and read a source key's exact type.
 */
export interface InWarehouse {
  embedFromSource(source: SourceText, rows: EmbedRow[], target?: StoreTarget): Promise<EmbedResult>;
  keyColumn(table: { schema: string; name: string }, column: string): Promise<PlatformPrimaryKey>;
}

export interface TableStore {
  readonly mode: "managed" | "platform";
  /** What users find the vectors by: the collection name, or the platform ref. */
  readonly name: string;
  exists(): Promise<boolean>;
  /** Creates the storage (generation 1) if missing; idempotent for the same spec. */
  create(spec: TableSpec): Promise<void>;
  /** Removes the storage and every generation; nothing there is fine. */
  drop(): Promise<void>;
  /** After a fill or pass: ready to serve at full speed (a platform's ANN index built if missing). Idempotent. */
  settle(): Promise<void>;
  upsert(rows: UpsertRow[], target?: StoreTarget): Promise<void>;
  delete(pks: string[], target?: StoreTarget): Promise<number>;
  updateMetadata(updates: MetadataUpdate[], target?: StoreTarget): Promise<number>;
  hashes(query?: HashesQuery): Promise<RowHashes[]>;
  docs(pks: string[], target?: StoreTarget): Promise<Map<string, StoredDoc>>;
  count(filter?: unknown, target?: StoreTarget): Promise<number>;
  generations(): Promise<{ live: number; building: number[] }>;
  createGeneration(spec: TableSpec): Promise<number>;
  swapGeneration(generation: number): Promise<void>;
  dropGeneration(generation: number): Promise<void>;
  pin(): Promise<TablePin>;
  /** Present on the warehouse's platform tables only. */
  readonly warehouse?: InWarehouse;
}

/** The table's storage. A platform table's store is its connection's (shared, never closed here). */
export async function tableStore(services: Services, table: VectorTableRow): Promise<TableStore> {
  if (table.mode === "managed") return managedTableStore(services.vectors, table.vectorstoreCollection);
  const connection = await findConnection(services.database.db, table.orgId, table.connectionId);
  if (!connection) throw new DriverError(`the connection ${table.connectionId} of vector table ${table.id} no longer exists`, { retryable: false });
  const store = await services.platform.of(connection);
  let ref = table.platformVectorRef;
  if (ref === null) {
    // A platform table created before its provider had a store: named now, once, for good.
    ref = store.refFor(table.id, table.name);
    await setPlatformVectorRef(services.database.db, table.id, ref);
  }
  const secrets = secretsOf(openCredentials(services.secrets, connection.credentials)).filter((s) => s.length >= 3);
  return platformTableStore(store, ref, secrets);
}

export function managedTableStore(vectors: VectorStore, collection: string): TableStore {
  return {
    mode: "managed",
    name: collection,
    exists: async () => vectors.hasCollection(collection),
    create: async (spec) => {
      if (!vectors.hasCollection(collection)) await vectors.createCollection(collection, generationOnly(spec));
    },
    drop: async () => {
      try {
        if (vectors.hasCollection(collection)) await vectors.dropCollection(collection);
      } catch (err) {
        // A concurrent deletion dropped it first: the outcome wanted.
        if (!(err instanceof VectorStoreError && err.code === "collection_not_found")) throw err;
      }
    },
    // The managed index follows every write by itself.
    settle: async () => {},
    upsert: (rows, target) => vectors.upsert(collection, rows, target),
    delete: (pks, target) => vectors.delete(collection, pks, target),
    updateMetadata: (updates, target) => vectors.updateMetadata(collection, updates, target),
    hashes: (query) => vectors.hashes(collection, query),
    docs: (pks, target) => vectors.docs(collection, pks, target),
    count: (filter, target) => vectors.count(collection, filter, target),
    generations: async () => vectors.generations(collection),
    createGeneration: (spec) => vectors.createGeneration(collection, generationOnly(spec)),
    swapGeneration: (generation) => vectors.swapGeneration(collection, generation),
    dropGeneration: (generation) => vectors.dropGeneration(collection, generation),
    pin: async () => vectors.pin(collection),
  };
}

/** The managed store keeps no key column: a spec is the generation's shape alone. */
function generationOnly({ primaryKey: _, ...spec }: TableSpec) {
  return spec;
}

/**
 * A platform store bound to one ref. A database's error text may quote what it was sent; the
 * connection's secrets are scrubbed from it before it travels on (last_error, a 502).
 */
export function platformTableStore(store: PlatformVectorStore, ref: string, secrets: string[] = []): TableStore {
  const scrubbed = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof DriverError) || !secrets.some((s) => err.message.includes(s))) throw err;
      const message = secrets.reduce((text, s) => text.replaceAll(s, "***"), err.message);
      throw new DriverError(message, { retryable: err.retryable, context: err.context });
    }
  };
  const warehouse = store instanceof WarehouseVectorStore ? store : null;
  return {
    mode: "platform",
    name: ref,
    exists: () => scrubbed(() => store.hasTable(ref)),
    create: (spec) => scrubbed(() => store.ensureTable(ref, spec)),
    drop: () => scrubbed(() => store.dropTable(ref)),
    settle: () => scrubbed(() => store.buildIndex(ref)),
    upsert: (rows, target) => scrubbed(() => store.upsert(ref, rows, { generation: target?.generation })),
    delete: (pks, target) => scrubbed(() => store.delete(ref, pks, { generation: target?.generation })),
    updateMetadata: (updates, target) => scrubbed(() => store.updateMetadata(ref, updates, { generation: target?.generation })),
    hashes: (query = {}) => scrubbed(() => store.hashes(ref, { afterPk: query.afterPk, limit: query.limit, pks: query.pks, generation: query.generation })),
    docs: (pks, target) => scrubbed(() => store.docs(ref, pks, { generation: target?.generation })),
    count: (filter, target) => scrubbed(() => store.count(ref, filter, { generation: target?.generation })),
    generations: () => scrubbed(async () => {
      const { live, building } = await store.generations(ref);
      return { live, building };
    }),
    createGeneration: (spec) => scrubbed(() => store.createGeneration(ref, spec)),
    swapGeneration: (generation) => scrubbed(() => store.swapGeneration(ref, generation)),
    dropGeneration: (generation) => scrubbed(() => store.dropGeneration(ref, generation)),
    pin: () =>
      scrubbed(async () => {
        // Nothing to hold: the search names the generation, and a swap since is answered by a retry (TablePin).
        const { generation, spec } = await store.live(ref);
        const searchText = warehouse ? (req: TextSearchRequest) => scrubbed(() => warehouse.searchText(ref, req, { generation })) : undefined;
        return { generation, spec, search: (req) => scrubbed(() => store.search(ref, req, { generation })), ...(searchText ? { searchText } : {}), release: () => {} };
      }),
    ...(warehouse
      ? {
          warehouse: {
            embedFromSource: (source, rows, target) => scrubbed(() => warehouse.embedFromSource(ref, source, rows, { generation: target?.generation })),
            keyColumn: (table, column) => scrubbed(() => warehouse.keyColumn(table, column)),
          } satisfies InWarehouse,
        }
      : {}),
  };
}

/**
 * The source's key as the platform table repeats it (CONTRACT 12: same name, same type). The
 * warehouse catalog's DATA_TYPE drops a NUMBER's precision and scale, so its store reads the exact
 * type (a bare NUMBER would be kept as VARCHAR, docs/platform-warehouse.md#the-table).
 */
export async function platformKey(store: TableStore, source: SourceConnector, table: string, column: SourceColumn): Promise<PlatformPrimaryKey> {
  if (!store.warehouse || !(source instanceof WarehouseSource)) return { name: column.name, type: column.type };
  return store.warehouse.keyColumn(await source.resolveTable(table), column.name);
}

/**
 * A storage failure during a request, as the API answers it: what the platform refused (no
 * vector extension, no privilege, a name it cannot hold) is the caller's to fix, 400; a database
 * that failed or did not answer is 502 `source_error` in its own words (docs/api.md#errors).
 */
export function storageFailure(err: unknown, connectionId: string): unknown {
  if (err instanceof PlatformSetupError) return validationError([{ path: err.kind === "names" ? "columns" : "connection_id", message: err.message }]);
  if (err instanceof DriverError) return new AppError("source_error", `The source database's vector storage failed: ${err.message}`, { details: { connection_id: connectionId, retryable: err.retryable } });
  return err;
}
