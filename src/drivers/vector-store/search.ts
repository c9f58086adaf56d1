// One search against one generation. Whatever the path, results are exact with respect to the
// filter, scored by exact f32 cosine, ordered by score then primary key, with min score applied.
// On a ready generation everything but the exact path's rid read (and the text, when texts are
// not kept in memory) comes from the mirror, read synchronously: one consistent state, the one
// every acknowledged write has reached.
import type { Client } from "@libsql/client";
import { comparePk } from "../../shared/pk-order.ts";
import { bandFor } from "./calibration.ts";
import { VectorStoreError } from "./errors.ts";
import { type Candidate, cutWithTies, exactTopK, rescore, SCAN_MIN_ROWS, scanTopK } from "./exact.ts";
import { compilePredicate, compileSql, type FilterNode, metadataColumnName, type Predicate } from "./filters/index.ts";
import type { Generation } from "./generation.ts";
import { matchingRids, readTexts } from "./reads.ts";
import { normalizeInPlace } from "./mirror.ts";
import { EXACT_UNFILTERED_ROWS, estimateSelectivity, exactCap, filteredRescore, filteredWant, hnswCandidates, rerankWant, routeFiltered, searchBreadth, withStrays } from "./planner.ts";
import { readMetadataValue } from "./rows.ts";
import { generationTables } from "./schema.ts";
import type { Metadata, SearchHit, SearchPath, SearchRequest, SearchResult } from "./types.ts";

export function queryVector(req: SearchRequest, dims: number): Float32Array {
  if (req.vector.length !== dims) {
    throw new VectorStoreError("invalid_row", `query vector has ${req.vector.length} dimensions, collection has ${dims}`);
  }
  const query = req.vector.slice(); // own buffer at offset 0 for usearch
  normalizeInPlace(query, 0, dims); // the exact path scores unit vectors by inner product
  return query;
}

interface Found {
  candidates: Candidate[];
  path: SearchPath;
}

export async function searchGeneration(client: Client, gen: Generation, req: SearchRequest, node: FilterNode | null, capScale?: number): Promise<SearchResult> {
  const query = queryVector(req, gen.spec.dimensions);
  if (gen.status === "loading") return searchSql(client, gen, query, req, node);
  if (gen.mirror.liveCount === 0 || req.k <= 0) return { hits: [], path: "empty" };
  const found = node ? await searchFiltered(client, gen, query, req, node, capScale) : searchUnfiltered(gen, query, req);
  const minScore = req.minScore ?? null;
  const candidates = minScore === null ? found.candidates : found.candidates.filter((c) => 1 - c.distance >= minScore);
  return { hits: await finish(client, gen, candidates, req.k), path: found.path };
}

function searchUnfiltered(gen: Generation, query: Float32Array, req: SearchRequest): Found {
  const mirror = gen.mirror;
  if (mirror.liveCount <= EXACT_UNFILTERED_ROWS || gen.status !== "ready") {
    return { candidates: exactTopK(mirror, query, mirror.liveRids(), req.k), path: "exact-memory" };
  }
  const breadth = searchBreadth(mirror.liveCount, gen.hnsw.params.expansionSearch);
  const want = rerankWant(req.k, breadth);
  const found = hnswCandidates(gen.hnsw, mirror, query, want, null, 1, req.minScore ?? null, breadth);
  return { candidates: cutWithTies(rescore(mirror, query, withStrays(gen.hnsw, mirror, found.rids.slice(0, want), null)), req.k), path: "hnsw" };
}

async function searchFiltered(client: Client, gen: Generation, query: Float32Array, req: SearchRequest, node: FilterNode, capScale?: number): Promise<Found> {
  const mirror = gen.mirror;
  const pred = compilePredicate(node, mirror.access);
  // Writes may land during the await: keep only rids still live and still matching in the mirror.
  const exactOver = async (limit: number): Promise<{ found: Found | null; count: number }> => {
    const all = await matchingRids(client, gen, compileSql(node, gen.spec.metadata), limit);
    if (all.count > limit) return { found: null, count: all.count };
    const rids = all.rids.filter((rid) => mirror.isLive(rid) && pred(rid)).sort();
    const candidates = rids.length > SCAN_MIN_ROWS ? scanTopK(mirror, query, rids, req.k) : exactTopK(mirror, query, rids, req.k);
    return { found: { candidates, path: "exact-memory" }, count: all.count };
  };
  if (gen.status !== "ready") return (await exactOver(Infinity)).found!;
  const live = mirror.liveCount;
  const cap = exactCap(req.k, live, capScale, gen.spec.dimensions);
  let selectivity = estimateSelectivity(pred, mirror, cap);
  const route = routeFiltered(selectivity, live, cap);
  if (route.path === "exact") {
    const exact = await exactOver(route.limit);
    if (exact.found) return exact.found;
    selectivity = Math.max(selectivity, exact.count / live);
  }
  // The collection's own measurement (calibration.ts) may ask for a deeper search, or none.
  const band = gen.calibration ? bandFor(gen.calibration, selectivity) : null;
  if (band?.choice === "exact") return (await exactOver(Infinity)).found!;
  return filteredHnsw(gen, query, req, pred, selectivity, band?.choice ?? 1, () => exactOver(Infinity));
}

async function filteredHnsw(
  gen: Generation,
  query: Float32Array,
  req: SearchRequest,
  pred: Predicate<number>,
  selectivity: number,
  depth: number,
  exactAll: () => Promise<{ found: Found | null }>,
): Promise<Found> {
  const breadth = searchBreadth(gen.mirror.liveCount, gen.hnsw.params.expansionSearch);
  const found = hnswCandidates(gen.hnsw, gen.mirror, query, filteredWant(req.k), pred, selectivity, req.minScore ?? null, breadth, depth);
  if (!found.complete) return (await exactAll()).found!;
  const rids = withStrays(gen.hnsw, gen.mirror, found.rids.slice(0, filteredRescore(req.k, breadth, depth)), pred);
  return { candidates: cutWithTies(rescore(gen.mirror, query, rids), req.k), path: "hnsw" };
}

/** Turns the (at most k + ties) candidates into hits from the mirror, orders them, cuts to k. */
async function finish(client: Client, gen: Generation, candidates: Candidate[], k: number): Promise<SearchHit[]> {
  if (candidates.length === 0) return [];
  const mirror = gen.mirror;
  const hits: SearchHit[] = candidates.map((c) => ({ pk: mirror.pkOf(c.rid), score: 1 - c.distance, metadata: mirror.metadataOf(c.rid), text: mirror.textOf(c.rid) ?? "" }));
  const ordered = orderHits(hits, k, gen.spec.numericPk);
  if (mirror.keepTexts) return ordered;
  // Texts live only in libSQL: one read for the final hits. A row deleted meanwhile is dropped.
  const ridOf = new Map(candidates.map((c) => [mirror.pkOf(c.rid), c.rid]));
  const texts = await readTexts(client, gen, ordered.map((h) => ridOf.get(h.pk)!));
  return ordered.filter((h) => texts.has(ridOf.get(h.pk)!)).map((h) => ({ ...h, text: texts.get(ridOf.get(h.pk)!)! }));
}

export function orderHits(hits: SearchHit[], k: number, numericPk: boolean): SearchHit[] {
  const byPk = comparePk(numericPk);
  hits.sort((a, b) => b.score - a.score || byPk(a.pk, b.pk));
  return hits.slice(0, k);
}

/** Ties beyond this many rows at the cut are not fully ordered by the SQL path. */
const SQL_TIE_EXTRA = 16;

/**
 * The exact path inside libSQL (its own `vector_distance_cos` over the f32 blobs): used while a
 * generation's mirror is loading, and the shape a remote-only deployment would use. The filter
 * is applied in SQL, so results are exact; scores may differ from usearch's in the last bits.
 */
export async function searchSql(client: Client, gen: Generation, query: Float32Array, req: SearchRequest, node: FilterNode | null): Promise<SearchResult> {
  const t = generationTables(gen.collection, gen.generation);
  const where = compileSql(node, gen.spec.metadata, "r");
  const metaCols = gen.spec.metadata.map((_, i) => `, r.${metadataColumnName(i)}`).join("");
  const minScore = req.minScore ?? null;
  const rs = await client.execute({
    sql: `SELECT r.pk${metaCols}, d.text, vector_distance_cos(d.vec, ?) AS dist
          FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid
          WHERE ${where.sql} ${minScore === null ? "" : "AND dist <= ?"} ORDER BY dist LIMIT ?`,
    args: [new Uint8Array(query.buffer.slice(0)), ...where.args, ...(minScore === null ? [] : [1 - minScore]), BigInt(req.k + SQL_TIE_EXTRA)],
  });
  const hits: SearchHit[] = rs.rows.map((r) => {
    const metadata: Metadata = {};
    gen.spec.metadata.forEach((c, i) => (metadata[c.name] = readMetadataValue(gen.spec, i, r[metadataColumnName(i)])));
    return { pk: String(r.pk), score: 1 - Number(r.dist), metadata, text: String(r.text) };
  });
  const cut = cutWithTies(hits.map((h, i) => ({ rid: i, distance: 1 - h.score })), req.k).map((c) => hits[c.rid]!);
  return { hits: orderHits(cut, req.k, gen.spec.numericPk), path: "exact-sql" };
}
