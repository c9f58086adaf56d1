// Platform-mode vector stores (docs/vector-tables.md#storage-modes): the vectors live in the customer's
// own platform (pgvector on the relational source, the warehouse's VECTOR type), in a table
// named by the vector table's `platform_vector_ref`. The operations mirror the managed
// VectorStore's so the sync engine and the query service can drive either (through the
// per-table seam, domains/vector-tables/storage.ts); rows, hashes, filters and hits are the
// managed store's own types.
import { DriverError } from "../../shared/errors.ts";
import type { GenerationSpec, MetadataUpdate, RowHashes, SearchHit, SearchRequest, StoredDoc, UpsertRow } from "../store-api/index.ts";

export type { GenerationSpec, MetadataUpdate, RowHashes, SearchHit, SearchRequest, UpsertRow };

/** The source's primary key column, as the platform table repeats it (CONTRACT 12: same name, same type). */
export interface PlatformPrimaryKey {
  name: string;
  /** The source's own type name (Postgres `format_type()` spelling, e.g. `integer`, `character varying(40)`). */
  type: string;
}

/** A generation's shape plus the key column; without `primaryKey` a store picks its own (a text `pk`). */
export interface PlatformTableSpec extends GenerationSpec {
  primaryKey?: PlatformPrimaryKey;
}

/** Which generation a call works on: the live one unless a building generation is named. */
export interface PlatformTarget {
  generation?: number;
}

export interface HashesRequest extends PlatformTarget {
  /** A page in the key column's own order after this pk... */
  afterPk?: string;
  limit?: number;
  /** ...or exactly these pks (then `afterPk` and `limit` are ignored). */
  pks?: string[];
}

/** The same shape as the managed store's: the engine reuses vectors from either. */
export type { StoredDoc };

/**
 * `index`: the ANN index answered; `exact`: a full scoring of the filtered rows did; `keyword` and
 * `hybrid`: a search with that query mode (pgvector only).
 */
export type PlatformSearchPath = "empty" | "index" | "exact" | "keyword" | "hybrid";

export interface PlatformSearchResult {
  hits: SearchHit[];
  path: PlatformSearchPath;
}

export interface PlatformGenerations {
  live: number;
  building: number[];
  /** The live generation's shape: a query is embedded with its model and dimensions. */
  spec: PlatformTableSpec;
}

/**
 * A platform refused what vecsync needs of it: the vector extension is missing, a privilege is, or
 * a name cannot be used. Trying again does not help (a task fails at once); the vector-tables
 * service answers 400 with the message, which carries the database's own words and what to run.
 */
export class PlatformSetupError extends DriverError {
  readonly kind: "extension_missing" | "privileges" | "names";
  constructor(kind: PlatformSetupError["kind"], message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, cause: options.cause });
    this.name = "PlatformSetupError";
    this.kind = kind;
  }
}

/**
 * A query `mode` this table cannot rank by (the warehouse has no BM25; a Postgres table from before
 * keyword search has no keyword columns yet): the query service answers 400 naming `mode`, with this message.
 */
export class UnsupportedModeError extends Error {
  constructor(
    readonly mode: string,
    message: string,
  ) {
    super(message);
    this.name = "UnsupportedModeError";
  }
}

/**
 * The platform stores of a running service, one per connection (domains/connections/platform.ts
 * builds it from one opener per provider, src/wiring.ts lists them). `connection` is a
 * connection row: its id, provider and sealed credentials.
 */
export interface PlatformStores {
  /** Whether platform mode on this provider has a store in this build. */
  supports(provider: string): boolean;
  /** The connection's store (shared: never close it); a provider without one → a DriverError that no retry cures. */
  of(connection: { id: string; provider: string; credentials: string }): Promise<PlatformVectorStore>;
  /** Closes every pool (shutdown). */
  close(): Promise<void>;
}

export interface PlatformVectorStore {
  /**
   * The `platform_vector_ref` of a new vector table (its id and name), e.g. `vecsync.vt_<id8>_<name>`.
   * A ref is then only ever passed back to the same kind of store.
   */
  refFor(id: string, name: string): string;
  /** Problems a spec has on this platform (reserved or over-long names…), for a 400 before anything is created. */
  specProblems(spec: PlatformTableSpec): string[];
  /**
   * Creates the table (as generation 1) if missing, possibly without its ANN index until
   * `buildIndex` (searches are exact meanwhile). Idempotent for the same spec; a table that
   * exists with another spec → VectorStoreError `collection_exists`. What the platform refuses
   * (no vector extension, no privilege) → PlatformSetupError.
   */
  ensureTable(ref: string, spec: PlatformTableSpec): Promise<void>;
  /**
   * Readies the live table to serve at full speed after bulk writes (pgvector: builds its HNSW
   * index once a first backfill has filled it, much faster than growing it row by row; a no-op
   * when there is nothing to do). Idempotent and cheap when done.
   */
  buildIndex(ref: string): Promise<void>;
  /** Drops the table and every building generation; no error when nothing exists. */
  dropTable(ref: string): Promise<void>;
  hasTable(ref: string): Promise<boolean>;

  /** Inserts or replaces rows by pk, in one transaction (the last row wins for a repeated pk). */
  upsert(ref: string, rows: UpsertRow[], target?: PlatformTarget): Promise<void>;
  /** Deletes rows by pk; returns how many existed. */
  delete(ref: string, pks: string[], target?: PlatformTarget): Promise<number>;
  /** Changes metadata and its hash, never text or vector; returns how many rows existed. */
  updateMetadata(ref: string, updates: MetadataUpdate[], target?: PlatformTarget): Promise<number>;
  hashes(ref: string, req?: HashesRequest): Promise<RowHashes[]>;
  docs(ref: string, pks: string[], target?: PlatformTarget): Promise<Map<string, StoredDoc>>;
  /** Rows matching a docs/vector-tables.md#filters filter (all rows without one). Throws FilterError on a bad filter. */
  count(ref: string, filter?: unknown, target?: PlatformTarget): Promise<number>;

  /**
   * Filtered top-k on the live generation: every hit satisfies the filter; hits are sorted by
   * score (1 − cosine distance) descending, then pk (numerically for numeric pks); `minScore`
   * keeps hits with score ≥ it. Throws FilterError on a bad filter. With `target.generation`,
   * a live generation other than that one → VectorStoreError `generation_not_found` (the caller
   * embedded the query for the one it named: it re-reads `generations` and embeds again).
   */
  search(ref: string, req: SearchRequest, target?: PlatformTarget): Promise<PlatformSearchResult>;

  generations(ref: string): Promise<PlatformGenerations>;
  /**
   * The live generation and its shape, for a query to embed with; may answer from a cache (it is
   * read on every query): a search naming a generation no longer live throws `generation_not_found`,
   * and the caller asks again.
   */
  live(ref: string): Promise<{ generation: number; spec: PlatformTableSpec }>;
  /** Starts an empty building generation (a new table) for a re-backfill; returns its number. The key column defaults to the live one's. */
  createGeneration(ref: string, spec: PlatformTableSpec): Promise<number>;
  /** Makes a building generation live in one transaction: a search sees the old or the new, never a mix. */
  swapGeneration(ref: string, generation: number): Promise<void>;
  /** Abandons a building generation. */
  dropGeneration(ref: string, generation: number): Promise<void>;

  close(): Promise<void>;
}
