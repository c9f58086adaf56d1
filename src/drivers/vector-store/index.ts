// The managed vector store (README.md, the map): durable rows in libSQL, a usearch HNSW index per
// collection generation, exact filtering, and a planner between exact and HNSW search. What it
// takes and answers is the store API every store serves (../store-api/).
export { VectorStore } from "./store.ts";
export { DEFAULT_INDEX_PARAMS, type VectorStoreOptions } from "./options.ts";
export type * from "./types.ts";
export { graphAddon, openGraph, usearchVersion } from "./graph-binding.ts";
