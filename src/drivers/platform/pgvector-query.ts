// Searches of pgvector platform tables in one round trip, so that a query through vecsync costs
// what the same SQL costs sent by hand (`bun run bench platform`). A search is one simple-protocol
// message run as one implicit transaction: the search settings, the search, then the OID of the
// table now named as the live one. The SQL is built from the live generation as last seen (cached
// per ref with its table's OID). The OID read last tells which table the search read: the search
// holds that table's lock until the message ends, so a swap (which drops the old table) cannot
// complete in between, and OIDs are never reused for a table swapped back. Another OID: the
// generation moved (another process swapped it); the cache is refreshed and the search runs
// again, or, for a caller that embedded its query for that generation, VectorStoreError
// `generation_not_found` (it embeds again for the new one).
// Postgres's estimate of a filter's matches is one more round trip, kept a minute per filter.
import { createHash } from "node:crypto";
import type postgres from "postgres";
import { parseFilter, VectorStoreError, type SearchRequest } from "../store-api/index.ts";
import { vectorText } from "./pgvector-rows.ts";
import { baseOf, indexable, qualified, type TableComment } from "./pgvector-schema.ts";
import { annLimit, byScoreThenPk, planSearch, readEstimate, SearchSql, settingsStatement, type Estimate } from "./pgvector-search.ts";
import type { PlatformSearchResult, PlatformTarget } from "./types.ts";

type Rows = Record<string, unknown>[];

/**
 * Estimates move with ANALYZE, slowly: a minute's reuse spares a round trip per repeated filter.
 * Kept under a hash of the table, generation and filter, not the filter's SQL itself (which holds
 * every value of its `in` lists): 1,000 entries of ~100 bytes whatever the filters.
 */
const ESTIMATE_TTL_MS = 60_000;
const ESTIMATES_KEPT = 1000;

/** The SQL was built for a generation that is no longer live. */
class Moved extends Error {}

/** A live generation and the OID of its table. */
export type LiveTable = TableComment & { oid: number };

export class PgvectorSearcher {
  private readonly lives = new Map<string, LiveTable>();
  private readonly estimates = new Map<string, { estimate: Estimate; at: number }>();

  /** `readLive`: the live generation read under the ref's lock (collection_not_found when none). */
  constructor(
    private readonly sql: postgres.Sql,
    private readonly readLive: (ref: string) => Promise<LiveTable>,
    private readonly exactMaxRows?: number,
  ) {}

  /** After this process changed the ref's tables (create, swap, drop). */
  forget(ref: string): void {
    this.lives.delete(ref);
  }

  /** The live generation, possibly as last seen; a search names it and finds out. */
  async live(ref: string): Promise<LiveTable> {
    const known = this.lives.get(ref);
    if (known) return known;
    const live = await this.readLive(ref);
    this.lives.set(ref, live);
    return live;
  }

  async search(ref: string, req: SearchRequest, target: PlatformTarget = {}): Promise<PlatformSearchResult> {
    const base = baseOf(ref);
    for (let attempt = 1; ; attempt++) {
      const cached = this.lives.has(ref);
      const live = await this.live(ref);
      if (target.generation !== undefined && target.generation !== live.generation) {
        this.forget(ref);
        if (cached) continue; // as last seen: look again before saying it moved
        throw new VectorStoreError("generation_not_found", `platform table ${ref}: generation ${target.generation} is no longer live`);
      }
      const node = parseFilter(req.filter, live.spec.metadata);
      const k = Math.floor(req.k);
      if (!(k > 0)) return { hits: [], path: "empty" };
      try {
        return await this.run(ref, base, live, new SearchSql(base, live, node, vectorText(req.vector, live.spec.dimensions, "(query)")), node !== null, req.minScore ?? null, k);
      } catch (err) {
        if (attempt >= 3 || err instanceof VectorStoreError) throw err;
        // Moved, or the statement failed on a table that changed shape or went: look again.
        this.forget(ref);
        if (!(err instanceof Moved) && (await this.live(ref)).generation === live.generation) throw err;
      }
    }
  }

  private async run(ref: string, base: string, live: LiveTable, q: SearchSql, filtered: boolean, minScore: number | null, k: number): Promise<PlatformSearchResult> {
    const plan = planSearch(k, filtered ? await this.estimate(ref, live, q) : null, indexable(live.spec.dimensions), this.exactMaxRows);
    let path: PlatformSearchResult["path"] = plan.kind === "ann" ? "index" : "exact";
    let rows = q.hits(await this.checked(base, live, plan.kind === "ann" ? [settingsStatement(plan.ef), q.ann(annLimit(k))] : [q.exact(k + 1)]));
    if (rows.length < k + 1 && plan.kind === "ann") {
      path = "exact";
      rows = q.hits(await this.checked(base, live, [q.exact(k + 1)]));
    }
    const order = byScoreThenPk(live.spec.numericPk);
    rows.sort(order);
    if (rows.length > k && rows[k - 1]!.score === rows[k]!.score) {
      const tie = rows[k]!.score;
      const tied = q.hits(await this.checked(base, live, [q.tie(tie)]));
      rows = [...rows.filter((r) => r.score > tie), ...tied].sort(order);
    }
    const hits = rows.slice(0, k).filter((r) => minScore === null || r.score >= minScore);
    return { hits, path };
  }

  /** `statements`, then the live table's OID, in one message; the last statement's rows if that table is `live`'s. */
  private async checked(base: string, live: LiveTable, statements: string[]): Promise<Rows> {
    const check = `SELECT '${qualified(base).replaceAll("'", "''")}'::regclass::oid::text::int8 AS oid`;
    const results = (await this.sql.unsafe([...statements, check].join(";\n")).simple()) as unknown as Rows[];
    if (Number(results[results.length - 1]?.[0]?.oid) !== live.oid) throw new Moved();
    return results[results.length - 2]!;
  }

  private async estimate(ref: string, live: TableComment, q: SearchSql): Promise<Estimate> {
    const key = createHash("sha256").update(`${ref}\u0000${live.generation}\u0000${q.where}`).digest("base64");
    const known = this.estimates.get(key);
    if (known && Date.now() - known.at < ESTIMATE_TTL_MS) return known.estimate;
    const [plan, total] = (await this.sql.unsafe(q.estimate()).simple()) as unknown as Rows[];
    const estimate = readEstimate(plan ?? [], total ?? []);
    this.estimates.delete(key);
    this.estimates.set(key, { estimate, at: Date.now() });
    if (this.estimates.size > ESTIMATES_KEPT) this.estimates.delete(this.estimates.keys().next().value!);
    return estimate;
  }
}
