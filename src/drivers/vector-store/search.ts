// One search against one generation. Whatever the path, results are exact with respect to the
// filter (checked again on the hydrated row), scored by exact f32 cosine, ordered by score then
// primary key, with min score applied.
import type { Client } from "@libsql/client";
import { VectorStoreError } from "./errors.ts";
import { type Candidate, cutWithTies, exactTopK } from "./exact.ts";
import { compilePredicate, compileSql, type FilterNode, metadataColumnName } from "./filters/index.ts";
import type { Generation } from "./generation.ts";
import { hydrate, matchingRids } from "./reads.ts";
import { comparePk } from "./pk-order.ts";
import { clearlyBroad, estimateSelectivity, EXACT_UNFILTERED_ROWS, exactCap, filteredWant, hnswCandidates, rerankWant } from "./planner.ts";
import { readMetadataValue } from "./rows.ts";
import { generationTables } from "./schema.ts";
import type { Metadata, SearchHit, SearchPath, SearchRequest, SearchResult } from "./types.ts";

export function queryVector(req: SearchRequest, dims: number): Float32Array {
  if (req.vector.length !== dims) {
    throw new VectorStoreError("invalid_row", `query vector has ${req.vector.length} dimensions, collection has ${dims}`);
  }
  return req.vector.slice(); // own buffer at offset 0 for usearch
}

export async function searchGeneration(client: Client, gen: Generation, req: SearchRequest, node: FilterNode | null, capScale?: number): Promise<SearchResult> {
  const query = queryVector(req, gen.spec.dimensions);
  if (gen.status === "loading") return searchSql(client, gen, query, req, node);
  const mirror = gen.mirror;
  if (mirror.liveCount === 0 || req.k <= 0) return { hits: [], path: "empty" };
  const indexed = gen.status === "ready";
  const minScore = req.minScore ?? null;
  let candidates: Candidate[];
  let path: SearchPath = "exact-memory";
  if (!node) {
    if (mirror.liveCount <= EXACT_UNFILTERED_ROWS || !indexed) candidates = exactTopK(mirror, query, mirror.liveRids(), req.k);
    else {
      const found = hnswCandidates(gen.hnsw, mirror, query, rerankWant(req.k), null, 1, minScore);
      candidates = exactTopK(mirror, query, found.rids, req.k);
      path = "hnsw";
    }
  } else {
    const pred = compilePredicate(node, mirror.access);
    const cap = exactCap(req.k, mirror.liveCount, capScale);
    const sampled = estimateSelectivity(pred, mirror);
    const where = compileSql(node, gen.spec.metadata);
    // Writes may land during an await: keep only rids still live and still matching.
    const exactOver = async (limit: number) => {
      const all = await matchingRids(client, gen, where, limit);
      return all.count <= limit ? exactTopK(mirror, query, all.rids.filter((rid) => mirror.isLive(rid) && pred(rid)).sort(), req.k) : null;
    };
    const broad = indexed && clearlyBroad(sampled, mirror.liveCount, cap);
    const exact = broad ? null : await exactOver(indexed ? cap : Infinity);
    if (exact) candidates = exact;
    else {
      const p = Math.max(sampled, broad ? 0 : cap / mirror.liveCount);
      const found = hnswCandidates(gen.hnsw, mirror, query, filteredWant(req.k), pred, p, minScore);
      if (found.complete) {
        candidates = exactTopK(mirror, query, found.rids, req.k);
        path = "hnsw";
      } else candidates = (await exactOver(Infinity))!;
    }
  }
  if (minScore !== null) candidates = candidates.filter((c) => 1 - c.distance >= minScore);
  return { hits: await finish(client, gen, candidates, req.k, node), path };
}

/** Hydrates candidates, re-checks the filter on what libSQL holds now, orders, cuts to k. */
async function finish(client: Client, gen: Generation, candidates: Candidate[], k: number, node: FilterNode | null): Promise<SearchHit[]> {
  if (candidates.length === 0) return [];
  const rows = await hydrate(client, gen, candidates.map((c) => c.rid));
  const names = gen.spec.metadata.map((c) => c.name);
  const check = compilePredicate<Metadata>(node, (column) => (m) => m[names[column]!] ?? null);
  const hits: SearchHit[] = [];
  for (const c of candidates) {
    const row = rows.get(c.rid);
    if (!row || !check(row.metadata)) continue;
    hits.push({ pk: row.pk, score: 1 - c.distance, metadata: row.metadata, text: row.text });
  }
  return orderHits(hits, k, gen.spec.numericPk);
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
