// The query endpoint (docs/vector-tables.md#query): embed the text as a query with the model of the
// stored vectors (by the table's provider, or in the warehouse for a built-in model), search the
// table's storage (its collection, or its platform table in the source) with the filter, shape the answer.
import type { Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { AppError, DriverError, validationError } from "../../shared/errors.ts";
import { UnsupportedModeError } from "../../drivers/platform/types.ts";
import { FilterError, parseFilter, VectorStoreError, type GenerationSpec, type SearchHit, type SearchRequest } from "../../drivers/store-api/index.ts";
import { embedOrFail, providerForEmbedding } from "../embedding-providers/embedding.ts";
import { vectorTableOf } from "../vector-tables/service.ts";
import { hasStorage } from "../vector-tables/state.ts";
import { storageFailure, tableStore, type TableStore } from "../vector-tables/storage.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import { queryExplain } from "./explain.ts";
import { syncedRow } from "./read-your-writes.ts";
import { DEFAULT_QUERY_LIMIT, type QueryExplain, type QueryRequest, type QueryResult } from "./schemas.ts";

/**
 * A query waits at most this long for its embedding. The driver retries 429s and 5xx with
 * back-off for up to a minute, right for a backfill; a person waiting on a search would rather
 * hear at once that the provider is not answering.
 */
export const QUERY_EMBED_DEADLINE_MS = 15_000;

/** States with servable vectors (docs/vector-tables.md#query): paused and re-backfilling tables answer from the stored ones. */
const SERVABLE = new Set<VectorTableRow["syncStatus"]>(["synced", "backfilling", "paused", "pending_rebackfill"]);

/** A pin that found the platform's live generation swapped under it is taken again this many times. */
const PIN_ATTEMPTS = 3;

/**
 * Whether an `error` table still has vectors to serve (CONTRACT 7: a failed sync or re-backfill
 * never takes stored vectors offline). Yes once a fill or pass completed (`last_sync_at` is set:
 * the live generation was served whole, even if it is empty), or when a first backfill stored
 * rows before it failed (they answered while it ran). The managed count is in memory.
 */
async function servesInError(store: TableStore, row: VectorTableRow): Promise<boolean> {
  return row.lastSyncAt !== null || ((await store.exists()) && (await store.count()) > 0);
}

async function requireServable(store: TableStore, row: VectorTableRow): Promise<void> {
  if (SERVABLE.has(row.syncStatus)) return;
  if (row.syncStatus === "error" && (await servesInError(store, row))) return;
  const why =
    row.syncStatus === "pending"
      ? "has no vectors yet; start a backfill with POST /v1/vector-tables/{id}/backfill"
      : `is in error with no vectors stored${row.lastError ? ` (${row.lastError})` : ""}; it answers once a backfill or sync pass succeeds`;
  throw new AppError("vector_table_not_ready", `The vector table ${why}`, { details: { sync_status: row.syncStatus } });
}

/** The filter checked against the pinned generation's columns, before paying for an embedding. */
function checkFilter(spec: GenerationSpec, filters: unknown): void {
  if (filters === undefined || filters === null) return;
  try {
    parseFilter(filters, spec.metadata);
  } catch (err) {
    if (err instanceof FilterError) throw validationError(err.details);
    throw err;
  }
}

/**
 * The query's vector, from the model and dimensions of the generation it will search, within the
 * deadline. A generation recorded without its model holds the table's serving model.
 */
async function embedQuery(services: Services, row: VectorTableRow, spec: GenerationSpec, text: string): Promise<{ vector: Float32Array; model: string }> {
  const model = spec.model ?? row.servingModel ?? row.embeddingModel;
  const dimensions = spec.dimensions;
  const provider = await providerForEmbedding(services, row.orgId, row.embeddingProviderId!);
  const signal = AbortSignal.timeout(QUERY_EMBED_DEADLINE_MS);
  try {
    const [vector] = await embedOrFail(provider, [text], { model, dimensions, kind: "query", signal });
    return { vector: vector!, model };
  } catch (err) {
    if (signal.aborted && !(err instanceof AppError)) {
      throw new AppError("provider_error", `The embedding provider did not answer within ${QUERY_EMBED_DEADLINE_MS / 1000} s`, { details: { provider: provider.provider, retryable: true } });
    }
    throw err;
  }
}

/**
 * A hit as the API answers it. With a `mode`, every result has `keyword_score` and `rank_score`;
 * a warehouse table (vector mode only, no BM25) answers null and the cosine for them.
 */
function present(hit: SearchHit, withMode: boolean) {
  const base = { id: hit.pk, similarity_score: hit.score };
  const rest = { metadata: hit.metadata, embedded_text: hit.text };
  if (!withMode) return { ...base, ...rest };
  return { ...base, keyword_score: hit.keywordScore ?? null, rank_score: hit.rankScore ?? hit.score, ...rest };
}

const modeRefused = (message: string) => validationError([{ path: "mode", message }]);

/**
 * The warehouse's platform tables rank by cosine only (docs/vector-tables.md#query-modes): its
 * keyword and hybrid modes are refused before the embedding is paid for. A `vector_weight` beside
 * a mode other than hybrid is accepted and unused, as a client sending one body to every mode expects.
 */
function checkStorageMode(store: TableStore, input: QueryRequest): void {
  if (store.warehouse && (input.mode === "keyword" || input.mode === "hybrid")) {
    throw modeRefused(`mode ${input.mode} is not supported by warehouse platform-mode storage (it has no BM25 search); use mode vector`);
  }
}

/**
 * POST /v1/vector-tables/{id}/query: any key permission (docs/api.md#permissions). `X-Environment-Id`, when
 * sent, must be the table's environment, else 404 (docs/api.md#environments).
 */
export async function queryVectorTable(services: Services, actor: KeyActor, id: string, input: QueryRequest, environmentHeader: string | null | undefined): Promise<QueryResult> {
  const found = await vectorTableOf(services, actor.orgId, id);
  const environmentId = environmentHeader?.trim();
  if (environmentId && environmentId !== found.environmentId) throw new AppError("not_found", "Vector table not found in that environment");
  if (!hasStorage(found)) {
    throw new AppError("vector_table_not_ready", "Platform-mode storage on this connection's provider is not available in this version, so this vector table holds no vectors to query");
  }
  // `min_synced_through` waits before anything else (a table still filling may be ready after it):
  // the query answers from the row as it stands then, and its `synced_through` holds for the search.
  const { row, syncedThrough } = await syncedRow(services, found, input);
  const startedMs = performance.now();
  try {
    const store = await tableStore(services, row);
    checkStorageMode(store, input);
    await requireServable(store, row);
    const { hits, model, path, explain } = await searchPinned(services, row, store, input);
    // Answered queries only: a refused or failed one shows in the HTTP histogram by its status.
    services.metrics.query(store.mode === "platform" ? `platform-${path}` : path, (performance.now() - startedMs) / 1000);
    const results = hits.map((hit) => present(hit, input.mode !== undefined));
    return { results, query: input.query, model, total_results: results.length, synced_through: syncedThrough, ...(explain && { explain }) };
  } catch (err) {
    if (err instanceof UnsupportedModeError) throw modeRefused(`mode ${err.mode}: ${err.message}`);
    if (err instanceof VectorStoreError && err.code === "collection_not_found" && row.mode === "platform") {
      throw new AppError("vector_table_not_ready", `The platform table ${row.platformVectorRef} is missing from the source database; POST /v1/vector-tables/{id}/backfill makes it again`);
    }
    throw row.mode === "platform" ? storageFailure(err, row.connectionId) : err;
  }
}

/**
 * One generation for the embedding and the search: a swap in between changes neither
 * (docs/vector-tables.md#query). The managed store holds the pinned generation; a platform store
 * cannot hold one across the embedding call, so a search that finds it swapped is embedded again
 * for the new one.
 */
async function searchPinned(services: Services, row: VectorTableRow, store: TableStore, input: QueryRequest): Promise<{ hits: SearchHit[]; model: string; path: string; explain?: QueryExplain }> {
  // Wall times for `explain`, summed over the attempts a moved platform generation costs.
  let embeddingMs = 0;
  let searchMs = 0;
  for (let attempt = 1; ; attempt++) {
    const pinned = await store.pin();
    try {
      checkFilter(pinned.spec, input.filters);
      const request = { k: input.limit ?? DEFAULT_QUERY_LIMIT, filter: input.filters ?? undefined, minScore: input.min_similarity_score ?? null, explain: input.explain === true, ...modeOf(store, input) };
      if (row.embeddingProviderId === null) {
        // A built-in model (docs/vector-tables.md#built-in-models): the warehouse embeds the text
        // with the pinned generation's model in the statement that searches it; no provider call.
        if (!pinned.searchText) throw new DriverError(`the platform table ${store.name} has no built-in models to embed the query with`, { retryable: false });
        const started = performance.now();
        const found = await pinned.searchText({ ...request, text: input.query });
        searchMs += performance.now() - started;
        const explain = input.explain ? queryExplain(store.mode, found, null, searchMs) : undefined;
        return { hits: found.hits, model: pinned.spec.model ?? row.servingModel ?? row.embeddingModel, path: found.path, explain };
      }
      const started = performance.now();
      const embedded = await embedQuery(services, row, pinned.spec, input.query);
      const searching = performance.now();
      embeddingMs += searching - started;
      const found = await pinned.search({ ...request, vector: embedded.vector });
      searchMs += performance.now() - searching;
      const explain = input.explain ? queryExplain(store.mode, found, embeddingMs, searchMs) : undefined;
      return { hits: found.hits, model: embedded.model, path: found.path, explain };
    } catch (err) {
      const moved = store.mode === "platform" && err instanceof VectorStoreError && err.code === "generation_not_found";
      if (!moved || attempt >= PIN_ATTEMPTS) throw err;
    } finally {
      pinned.release();
    }
  }
}

/** The store's ranking fields; the warehouse's store (vector mode at most: checkStorageMode) is not asked for them. */
function modeOf(store: TableStore, input: QueryRequest): Pick<SearchRequest, "mode" | "text" | "vectorWeight"> {
  if (input.mode === undefined || store.warehouse) return {};
  return { mode: input.mode, text: input.query, ...(input.vector_weight === undefined ? {} : { vectorWeight: input.vector_weight }) };
}
