// The plain data every vector store takes and answers: the managed store (vector-store/) and the
// platform stores (platform/) alike. No libSQL, usearch or domain types leak through here.

/** Metadata column types, as `filter_type` in docs/vector-tables.md#columns. */
export type MetadataType = "keyword" | "integer" | "float" | "boolean";

export interface MetadataColumn {
  /** The source column name, used as-is in filters and in returned metadata. */
  name: string;
  type: MetadataType;
}

/** A metadata value as stored and returned: typed by the column, or null. */
export type MetadataValue = string | number | boolean | null;
export type Metadata = Record<string, MetadataValue>;

/** The shape of one generation of a collection; a re-backfill may change it. */
export interface GenerationSpec {
  dimensions: number;
  metadata: MetadataColumn[];
  /** Ties in score are broken by primary key: numerically when true, else by code point. */
  numericPk: boolean;
  /**
   * The embedding model whose vectors the generation holds: a query searching it is embedded with
   * this model and `dimensions` (docs/vector-tables.md#query). Absent on generations recorded before it was kept.
   */
  model?: string;
}

export interface UpsertRow {
  pk: string;
  textHash: string;
  metaHash: string;
  text: string;
  /** Missing columns are stored as null. Integers must be safe integers (±2^53). */
  metadata: Metadata;
  vector: Float32Array;
}

export interface MetadataUpdate {
  pk: string;
  metaHash: string;
  metadata: Metadata;
}

/** A stored row's text and vector, for reusing a vector instead of embedding the same text again. */
export interface StoredDoc {
  text: string;
  vector: Float32Array;
}

export interface RowHashes {
  pk: string;
  textHash: string;
  metaHash: string;
}

export interface SearchRequest {
  vector: Float32Array;
  /** 1-100 in the API; the store accepts any positive k. */
  k: number;
  /** The docs/vector-tables.md#filters filter language, unvalidated (validation throws FilterError). */
  filter?: unknown;
  /** Keep results with similarity ≥ this (cosine similarity, 1 − cosine distance). */
  minScore?: number | null;
  /** Report what the search did (SearchResult.explain); without it nothing is gathered. */
  explain?: boolean;
  /**
   * How to rank (docs/vector-tables.md#query-modes): absent, the cosine search as always, hits
   * without keyword or rank scores; given, every hit carries `keywordScore` and `rankScore`.
   */
  mode?: QueryMode;
  /** The query's words, for `keyword` and `hybrid` (and the keyword scores of a `vector` mode search). */
  text?: string;
  /** Hybrid only: the vector ranking's weight in the fusion, 0-1 (fusion.ts DEFAULT_VECTOR_WEIGHT). */
  vectorWeight?: number;
  /**
   * Of the k rows, how many at the top must be in exact order (default all). Hybrid's vector side
   * asks for 2k rows of which only the first k weigh much in the fusion: an unfiltered HNSW search
   * then re-ranks as many candidates as a search of k would, not of 2k (planner.ts planUnfiltered).
   */
  exactTop?: number;
}

export type QueryMode = "vector" | "keyword" | "hybrid";

export interface SearchHit {
  pk: string;
  score: number;
  metadata: Metadata;
  text: string;
  /** With a query `mode`: the row's BM25 score for the query's words, null when none matched. */
  keywordScore?: number | null;
  /** With a query `mode`: what the hits are ordered by (cosine, BM25, or the fused score). */
  rankScore?: number;
}

/** What one search did, as the query's `explain` reports it (docs/vector-tables.md#explain). */
export interface SearchExplain {
  /** The planner's estimate of the live rows passing the filter (exact when counted); every live row without one. */
  estimatedMatches: number;
  /**
   * Rows scored or handed back by every step the search took: the exact path's rows scored; the
   * HNSW path's candidates returned by the index (each widening pass counted) plus its strays.
   */
  candidatesExamined: number;
  /** Mean recall@10 calibration.ts measured for the HNSW plan taken; 1 on the exact path; null when not measured. */
  expectedRecall: number | null;
}
