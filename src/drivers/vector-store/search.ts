// One search against one generation: the planner (planner.ts) decides the path, this module runs
// it. Whatever the path, results are exact with respect to the filter, scored by exact f32 cosine,
// ordered by score then primary key, with min score applied. On a ready generation everything but
// the exact path's rid read comes from the mirror, read synchronously: one consistent state, the
// one every acknowledged write has reached. A compact mirror (mirror.ts) keeps i8 codes only, no
// texts: the paths then choose refineRows(k) candidates by the codes' cosine, and refine.ts scores
// them exactly, with their texts, from libSQL.
import type { Client } from "@libsql/client";
import { comparePk, compilePredicate, compileSql, type FilterNode, type Metadata, metadataColumnName, type Predicate, type SearchHit, type SearchRequest, VectorStoreError } from "../store-api/index.ts";
import { type ColumnOrder, type Run, runOf, spansOf } from "./column-order.ts";
import { type Candidate, cutWithTies, exactTopK, orderTopK, rescore, SCAN_MIN_ROWS, scanTopK } from "./exact.ts";
import { emptyExplain, explainSearch, sqlExplain } from "./explain.ts";
import type { HnswIndex } from "./hnsw.ts";
import { type Mirror, normalizeInPlace } from "./mirror.ts";
import { type Calibration, filteredSelectivity, type HnswPlan, type Plan, type PlanInput, planSelective, planUnfiltered } from "./planner.ts";
import { knownMatches, valuesOf } from "./selectivity.ts";
import { quantizeQuery } from "./quantize.ts";
import { countMatching, matchingRids } from "./reads.ts";
import { refine, refineRows } from "./refine.ts";
import { type GenerationRef, readMetadataValue } from "./rows.ts";
import { generationTables } from "./schema.ts";
import type { CollectionStatus, SearchPath, SearchResult } from "./types.ts";

/** What a search reads of its generation (generation.ts); the index object changes on a rebuild. */
export interface SearchTarget extends GenerationRef {
  readonly status: CollectionStatus;
  readonly mirror: Mirror;
  readonly hnsw: HnswIndex;
  readonly calibration: Calibration | null;
}

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
  /** Rows scored or handed back by the steps taken (SearchExplain.candidatesExamined): a count, kept whether asked or not. */
  examined: number;
}

/**
 * A search's parsed filter (compiled to SQL for the exact path's rid read), its predicate over
 * the mirror, and, for a filter on one column with a current column order, its runs there.
 */
interface Filter {
  node: FilterNode;
  pred: Predicate<number>;
  ordered: Ordered | null;
}

interface Ordered {
  order: ColumnOrder;
  runs: Run[];
  /** The rows in the runs: the filter's exact match count. */
  rows: number;
}

function orderedRuns(node: FilterNode, mirror: Mirror): Ordered | null {
  const spans = spansOf(node, mirror.keyOf);
  const order = spans && mirror.orders.get(spans.column);
  if (!order) return null;
  const runs = spans!.spans.map((span) => runOf(order.keys, span)).filter((run) => run.to > run.from);
  return { order, runs, rows: runs.reduce((n, run) => n + run.to - run.from, 0) };
}

/**
 * `meanwhile`: work the caller has for the loop while the graph searches (a hybrid query's keyword
 * ranking: hnsw.ts `search`), run then if this search asks the graph, else not at all. It must
 * make no call on the generation's index.
 */
export async function searchGeneration(client: Client, gen: SearchTarget, req: SearchRequest, node: FilterNode | null, capScale?: number, meanwhile?: () => void): Promise<SearchResult> {
  const query = queryVector(req, gen.spec.dimensions);
  if (gen.status === "loading") return searchSql(client, gen, query, req, node);
  const mirror = gen.mirror;
  if (mirror.liveCount === 0 || req.k <= 0) return req.explain ? { hits: [], path: "empty", explain: emptyExplain() } : { hits: [], path: "empty" };
  const input: PlanInput = {
    k: req.k,
    liveRows: mirror.liveCount,
    dims: gen.spec.dimensions,
    indexReady: gen.status === "ready",
    expansionSearch: gen.hnsw.params.expansionSearch,
    calibration: gen.calibration,
    capScale,
    exactTop: req.exactTop,
  };
  const filter = node ? { node, pred: compilePredicate(node, mirror.access), ordered: orderedRuns(node, mirror) } : null;
  // Exact match counts, and whether the exact path would scan them from contiguous codes.
  const known = !filter ? null : filter.ordered ? filter.ordered.rows : knownMatches(filter.node, mirror);
  const scannable = filter?.ordered != null;
  // The filter's estimated share of the rows; a rebuilding index plans exact without one, so it is
  // sampled then only for explain (1 stands unused otherwise).
  const selectivity = filter && (input.indexReady || req.explain) ? filteredSelectivity(input, filter.pred, mirror, known) : 1;
  const plan = filter ? planSelective(input, selectivity, known, scannable) : planUnfiltered(input);
  // A compact mirror's paths keep more than k: their order is the codes', refine() makes it exact.
  const keep = mirror.hasFloats ? req.k : refineRows(req.k);
  const found = await run(client, gen, query, req, plan, filter, keep, meanwhile);
  const refined = mirror.hasFloats ? null : await refine(client, gen, query, found.candidates, req.k);
  const minScore = req.minScore ?? null;
  // Writes may land during refine's read: keep only rows still live and still matching.
  const chosen = refined ? refined.candidates.filter((c) => mirror.isLive(c.rid) && (!filter || filter.pred(c.rid))) : found.candidates;
  const candidates = minScore === null ? chosen : chosen.filter((c) => 1 - c.distance >= minScore);
  const hits = finish(gen, candidates, req.k, refined?.texts);
  if (!req.explain) return { hits, path: found.path };
  return { hits, path: found.path, explain: explainSearch(input, filter ? selectivity : null, plan, found.path, found.examined) };
}

/**
 * Runs a plan, keeping the `keep` best (and their ties); a bounded exact read that overflows, or
 * an HNSW search that falls short, runs the plan's next step.
 */
async function run(client: Client, gen: SearchTarget, query: Float32Array, req: SearchRequest, plan: Plan, filter: Filter | null, keep: number, meanwhile?: () => void): Promise<Found> {
  const mirror = gen.mirror;
  const pred = filter?.pred ?? null;
  if (plan.path === "hnsw") {
    // An HNSW step planned before an awaited exact read (a bounded read that overflowed) may find
    // a rebuild started meanwhile: that index is partial, so the exact path answers instead.
    if (gen.status !== "ready") return run(client, gen, query, req, { path: "exact" }, filter, keep);
    const found = hnswCandidates(gen.hnsw, mirror, query, plan, pred, req.minScore ?? null, meanwhile);
    // A walk cut short beside an insertion (hnsw.ts `search`, ~0.2 % of searches during a fill):
    // every row scanned instead, by its codes when there are many.
    if (found.cut && !filter) return examinedToo(found.returned, scanned(mirror, query, keep));
    if (found.cut || (!found.complete && plan.exactIfShort)) return examinedToo(found.returned, await run(client, gen, query, req, { path: "exact" }, filter, keep));
    const rids = withStrays(gen.hnsw, mirror, query, found.rids.slice(0, plan.rescore), pred, Math.max(plan.rescore, keep));
    return { candidates: cutWithTies(rescore(mirror, query, rids), keep), path: "hnsw", examined: found.returned + gen.hnsw.strays.size };
  }
  if (!filter) {
    const live = mirror.liveRids();
    return { candidates: exactTopK(mirror, query, live, keep), path: "exact-memory", examined: live.length };
  }
  const limit = plan.path === "exact-bounded" ? plan.limit : Infinity;
  // Rows scored so far: a step whose answer is not taken still did its work (Found.examined).
  let scored = 0;
  // A filter with a column order that still holds the rows as they are: its runs, scanned in place.
  const ordered = filter.ordered && mirror.orders.isCurrent(filter.ordered.order) ? filter.ordered : null;
  if (ordered && ordered.rows <= limit) {
    const chosen = orderTopK(mirror, query, ordered.order, ordered.runs, keep);
    scored += ordered.rows;
    if (chosen.every((c) => filter.pred(c.rid))) return { candidates: chosen, path: "exact-memory", examined: scored };
  }
  // A keyword `=` / `in` finds its rows in the mirror's column (columns.ts): no SQL, no await.
  const one = valuesOf(filter.node);
  const inMemory = one ? mirror.keywordRids(one.column, one.values) : null;
  const matching = inMemory ? { count: inMemory.length, rids: inMemory } : await matchingRids(client, gen, compileSql(filter.node, gen.spec.metadata), limit);
  if (plan.path === "exact-bounded" && matching.count > limit) return examinedToo(scored, await run(client, gen, query, req, plan.beyond, filter, keep));
  // Writes may land during the await (and SQL may see a commit the mirror has yet to apply): only
  // rids still live and still matching in the mirror count. The predicate is checked on the
  // chosen rows, not on every match (5,000 matches cost ~0.6 ms of predicate calls): if they
  // all pass, dropping failing rows below the cut would not change it. Else, all rows are checked.
  const live = inMemory ?? matching.rids.filter((rid) => mirror.isLive(rid)).sort();
  const chosen = nearestOf(mirror, query, live, keep);
  scored += live.length;
  if (chosen.every((c) => filter.pred(c.rid))) return { candidates: chosen, path: "exact-memory", examined: scored };
  const passing = live.filter((rid) => filter.pred(rid));
  return { candidates: nearestOf(mirror, query, passing, keep), path: "exact-memory", examined: scored + passing.length };
}

/** A later step's answer, counting the rows an earlier step examined before handing over to it. */
function examinedToo(earlier: number, found: Found): Found {
  found.examined += earlier;
  return found;
}

/** Every live row's nearest, scanned. */
function scanned(mirror: Mirror, query: Float32Array, keep: number): Found {
  const live = mirror.liveRids();
  return { candidates: nearestOf(mirror, query, live, keep), path: "exact-memory", examined: live.length };
}

/** The exact path's scan: the i8 scan with an f32 re-score for many rows, f32 for a few. */
function nearestOf(mirror: Mirror, query: Float32Array, rids: Uint32Array, keep: number): Candidate[] {
  return rids.length > SCAN_MIN_ROWS ? scanTopK(mirror, query, rids, keep) : exactTopK(mirror, query, rids, keep);
}

export interface HnswOutcome {
  /** Live rids passing the filter, nearest first by the index's (approximate) distance. */
  rids: number[];
  /** False when the index could not find enough: the plan says whether to fall back to the exact path. */
  complete: boolean;
  /** Results the index handed back, every widening pass counted (SearchExplain.candidatesExamined). */
  returned: number;
  /** The index's walk ended short of its rows (hnsw.ts `search`): the exact path answers instead. */
  cut?: boolean;
}

/**
 * HNSW search with oversampling and exact post-filtering, widening ×2 from the plan's first pass
 * until `want` rows pass, the index is exhausted, or what remains is below `minScore`.
 */
export function hnswCandidates(index: HnswIndex, mirror: Mirror, query: Float32Array, plan: HnswPlan, pred: Predicate<number> | null, minScore: number | null, meanwhile?: () => void): HnswOutcome {
  // The i8 index is given the rows' codes (mirror.ts gatherCodes) and checks rows by them: the
  // query goes in the same form. As f32, usearch's own cast to i8 left a 768-dimension unit
  // vector's components within about ±5, and at 1M × 768 recall@10 was 0.983 against 0.993 with
  // the codes, at the same depth on the same store.
  const asked = quantizeQuery(query);
  let kq = plan.firstKq;
  let returned = 0;
  for (;;) {
    kq = Math.min(kq, index.size);
    const found = index.search(asked, kq, (rid, version) => mirror.isCurrent(rid, version), meanwhile);
    meanwhile = undefined; // beside the first pass only
    returned += found.rids.length;
    const rids = pred ? found.rids.filter((rid) => pred(rid)) : found.rids;
    if (found.cut) return { rids, complete: false, returned, cut: true };
    if (rids.length >= plan.want || found.exhausted || kq >= index.size) return { rids, complete: true, returned };
    const farthest = found.distances[found.distances.length - 1];
    // i8 distances are approximate: keep a margin before concluding nothing further can qualify
    if (minScore !== null && farthest !== undefined && 1 - farthest < minScore - 0.02) return { rids, complete: true, returned };
    if (kq >= plan.maxKq) return { rids, complete: false, returned };
    kq *= 2;
  }
}

/**
 * Strays scored one by one beside the candidates; past this many, a native i8 scan of them picks
 * the few that can matter first. Strays grow with the graph (0.1 % of 100k × 384 rows, 1.1 % of
 * 300k, 0.7 % of 1M × 768): 3,222 of them re-scored in JS f32 made an unfiltered search take 3 ms
 * instead of 0.3. The scan reads a copy of their codes kept in one buffer (stray-scan.ts).
 */
const STRAYS_SCANNED_FROM = 256;

/** Candidates plus the index's strays that are current and pass the filter (strays.ts): all of them, or the `want` nearest by their codes. */
export function withStrays(index: HnswIndex, mirror: Mirror, query: Float32Array, rids: number[], pred: Predicate<number> | null, want: number): number[] {
  const strays = index.strays;
  if (strays.size === 0) return rids;
  const seen = new Set(rids);
  const accept = (rid: number) => !seen.has(rid) && mirror.isLive(rid) && (!pred || pred(rid));
  if (strays.size <= STRAYS_SCANNED_FROM) return rids.concat([...strays].filter(accept));
  // The filter's share among the strays, from the first 64 live ones: how many to ask the scan for.
  let sampled = 0;
  let passed = 0;
  for (const rid of pred ? strays : []) {
    if (!mirror.isLive(rid)) continue;
    if (pred!(rid)) passed++;
    if (++sampled === 64) break;
  }
  const share = pred ? (passed + 1) / (sampled + 1) : 1;
  return rids.concat(index.strayCodes.nearest(strays, mirror, query, want, share, accept).map((c) => c.rid));
}

/**
 * Turns the (at most k + ties) candidates into hits from the mirror, orders them, cuts to k.
 * Texts come from `refinedTexts` (a compact mirror's: refine.ts read them), else the mirror.
 */
function finish(gen: SearchTarget, candidates: Candidate[], k: number, refinedTexts?: Map<number, string>): SearchHit[] {
  if (candidates.length === 0) return [];
  const mirror = gen.mirror;
  const textOf = (rid: number) => refinedTexts?.get(rid) ?? mirror.textOf(rid) ?? "";
  const hits: SearchHit[] = candidates.map((c) => ({ pk: mirror.pkOf(c.rid), score: 1 - c.distance, metadata: mirror.metadataOf(c.rid), text: textOf(c.rid) }));
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
export async function searchSql(client: Client, gen: GenerationRef, query: Float32Array, req: SearchRequest, node: FilterNode | null): Promise<SearchResult> {
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
  const ordered = orderHits(cut, req.k, gen.spec.numericPk);
  if (!req.explain) return { hits: ordered, path: "exact-sql" };
  return { hits: ordered, path: "exact-sql", explain: sqlExplain(await countMatching(client, gen, compileSql(node, gen.spec.metadata))) };
}
