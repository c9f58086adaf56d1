// Platform-mode vector stores (docs/vector-tables.md#storage-modes "Vector storage modes"): the vectors live in the customer's
// own platform (pgvector on the relational source, later the warehouse's VECTOR type), in a table
// named by the vector table's `platform_vector_ref`. The operations mirror the managed
// VectorStore's so the sync engine and the query service can drive either; rows, hashes, filters
// and hits are the managed store's own types.
import type { GenerationSpec, MetadataUpdate, RowHashes, SearchHit, SearchRequest, StoredDoc, UpsertRow } from "../vector-store/index.ts";

export type { GenerationSpec, MetadataUpdate, RowHashes, SearchHit, SearchRequest, UpsertRow };

/** Which generation a call works on: the live one unless a building generation is named. */
export interface PlatformTarget {
  generation?: number;
}

export interface HashesRequest extends PlatformTarget {
  /** A page in pk (code point) order after this pk... */
  afterPk?: string;
  limit?: number;
  /** ...or exactly these pks (then `afterPk` and `limit` are ignored). */
  pks?: string[];
}

/** The same shape as the managed store's: the engine reuses vectors from either. */
export type { StoredDoc };

/** `index`: the ANN index answered; `exact`: a full scoring of the filtered rows did. */
export type PlatformSearchPath = "empty" | "index" | "exact";

export interface PlatformSearchResult {
  hits: SearchHit[];
  path: PlatformSearchPath;
}

export interface PlatformGenerations {
  live: number;
  building: number[];
}

export interface PlatformVectorStore {
  /**
   * Creates the table (as generation 1) if missing. Idempotent for the same spec; a table that
   * exists with another spec → VectorStoreError `collection_exists`.
   */
  ensureTable(ref: string, spec: GenerationSpec): Promise<void>;
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
   * keeps hits with score ≥ it. Throws FilterError on a bad filter.
   */
  search(ref: string, req: SearchRequest): Promise<PlatformSearchResult>;

  generations(ref: string): Promise<PlatformGenerations>;
  /** Starts an empty building generation (a new table) for a re-backfill; returns its number. */
  createGeneration(ref: string, spec: GenerationSpec): Promise<number>;
  /** Makes a building generation live in one transaction: a search sees the old or the new, never a mix. */
  swapGeneration(ref: string, generation: number): Promise<void>;
  /** Abandons a building generation. */
  dropGeneration(ref: string, generation: number): Promise<void>;

  close(): Promise<void>;
}
