// Public types of the managed vector store, beside the plain data every store shares
// (store-api/types.ts). No libSQL, usearch or domain types leak through here.
import type { GenerationSpec, SearchExplain, SearchHit, SearchRequest } from "../store-api/index.ts";

/** Which generation a write goes to: the live one unless a building generation is named. */
export interface WriteTarget {
  generation?: number;
  /**
   * Upserts only: add the rows to the HNSW graph in background steps, scoring them exactly in
   * searches meanwhile (later.ts): the write returns sooner, for writers where latency counts.
   */
  indexLater?: boolean;
  /**
   * With `indexLater`: a change stream's write. It waits for the graph only past STREAM_BACKLOG
   * rows waiting (later.ts), not the fill's BACKLOG: commit → queryable is what it is measured by.
   */
  streaming?: boolean;
}

/** Which path answered a search; exposed for tests, logs and the benchmark. */
export type SearchPath = "empty" | "exact-memory" | "exact-sql" | "hnsw" | "keyword" | "hybrid";

export interface SearchResult {
  hits: SearchHit[];
  path: SearchPath;
  /** Present when SearchRequest.explain asked for it. */
  explain?: SearchExplain;
}

/**
 * The live generation of a collection held for one query: embed the query with its `spec` (model,
 * dimensions), search it, release it. A swap meanwhile changes neither, and the old generation is
 * dropped only once released (docs/vector-tables.md#query).
 */
export interface PinnedGeneration {
  generation: number;
  spec: GenerationSpec;
  /** Throws FilterError on a filter that does not fit this generation's metadata columns. */
  search(req: SearchRequest): Promise<SearchResult>;
  /** Idempotent; every pin must be released. */
  release(): void;
}

/** HNSW parameters; the scalar is always i8 (hnsw.ts). usearch fixes expansion_search when an index is created or loaded. */
export interface IndexParams {
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** Threads for index builds and batch adds; searches always use one thread. */
  threads: number;
}

export type GenerationState = "building" | "live";

/** Readiness of one collection: `rebuilding` answers exactly (slower), never empty or partial. */
export type CollectionStatus = "loading" | "rebuilding" | "ready";

export interface CollectionStats {
  collection: string;
  generation: number;
  status: CollectionStatus;
  rows: number;
  dimensions: number;
  /** Bytes of the collection's tables in libSQL (dbstat when available, else an estimate). */
  sqlBytes: number;
  /** Bytes held in process memory: the mirror (vectors, metadata, keys, texts) and the HNSW index. */
  memoryBytes: number;
  /** True once the mirror keeps i8 codes only (VectorStoreOptions.floatMirrorBytes). */
  compact: boolean;
  /** Rows whose codes a compact mirror keeps itself while the index lends the rest (lent-codes.ts); null: it keeps them all. */
  codesKept: number | null;
  indexBytes: number;
  changeSeq: number;
  checkpointSeq: number;
  /** Rows a search by their own vector does not reach, scored apart by every search (strays.ts). */
  strays: number;
}
