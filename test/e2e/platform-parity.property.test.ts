// Property: the same source table served in managed mode and in platform mode (pgvector in the
// source) answers every query alike — the same ids in the same order, scores within 1e-3 — for
// random query texts, limits, minimum scores and filters (every operator, `$or`, shorthand, nulls).
// Both tables are small enough that both stores score exactly; query modes keyword and hybrid too
// (BM25 within 1e-6). Over HTTP against the real process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { filterArbitraries } from "../drivers/vector-store/filter-arbitraries.ts";
import { PG_ADMIN_URL } from "../harness.ts";
import { eventuallyStatus, must } from "./helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "./postgres-world.ts";
import { CATEGORIES } from "./source.ts";

let w: PgWorld;
let managed: any;
let platform: any;

beforeAll(async () => {
  w = await openPgWorld({ VECSYNC_SYNC_INTERVAL: "3600" }, { mode: "platform" });
  const admin = new URL(PG_ADMIN_URL);
  const credentials = { host: "127.0.0.1", port: Number(admin.port || 5432), database: w.pg.name, user: admin.username || "postgres", password: "unused-trust-auth", ssl_mode: "disable" };
  const connection = must(await w.api.call("POST", "/v1/providers/db_relational/connections", { name: "managed-source", mode: "managed", credentials }), 201);
  platform = await createAndBackfill(w, tableBody(w, { name: "in-platform" }));
  managed = await createAndBackfill(w, { ...tableBody(w, { name: "in-managed" }), connection_id: connection.id });
  await eventuallyStatus(w.api, platform.id, "synced", 20_000);
  await eventuallyStatus(w.api, managed.id, "synced", 20_000);
}, 40_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

const WORDS = "vector search engine index postgres replication pasta garden mountain river coffee bread castle piano rocket planet desert forest winter summer twin".split(" ");
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(" "));
// Values of the seeded rows (source.ts), and some that no row holds.
const keyword = fc.constantFrom(...(CATEGORIES.filter(Boolean) as string[]), "none", "");
const { filter } = filterArbitraries({
  keyword,
  float: fc.constantFrom(0, 10, 14.6, 29.2, 50, 73, 99.5),
  integer: fc.integer({ min: -1, max: 20 }),
  bound: fc.constantFrom(-1, 0, 3, 4.5, 10, 19, 50, 50.5, 100),
});
const body = fc.record(
  { query: text, limit: fc.integer({ min: 1, max: 100 }), min_similarity_score: fc.constantFrom(0, 0.1, 0.3), filters: filter },
  { requiredKeys: ["query"] },
);

type Hit = { id: string; similarity_score: number; metadata: unknown; embedded_text: string };

/** Same ids in the same order; two hits may trade places only when their scores are a float rounding apart. */
function sameAnswer(a: Hit[], b: Hit[]): string | null {
  if (a.length !== b.length) return `${a.length} results ≠ ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!, y = b[i]!;
    if (Math.abs(x.similarity_score - y.similarity_score) > 1e-3) return `score at ${i}: ${x.similarity_score} ≠ ${y.similarity_score}`;
    if (x.id === y.id) {
      if (x.embedded_text !== y.embedded_text || JSON.stringify(x.metadata) !== JSON.stringify(y.metadata)) return `row ${x.id} differs`;
      continue;
    }
    const swapped = b.findIndex((h) => h.id === x.id);
    if (swapped < 0 || Math.abs(b[swapped]!.similarity_score - x.similarity_score) > 1e-6) return `id at ${i}: ${x.id} ≠ ${y.id}`;
  }
  return null;
}

test("managed and platform answer the same ids in the same order for random queries and filters", async () => {
  let valid = 0;
  await fc.assert(
    fc.asyncProperty(body, async (q) => {
      const m = await w.api.call("POST", `/v1/vector-tables/${managed.id}/query`, q);
      const p = await w.api.call("POST", `/v1/vector-tables/${platform.id}/query`, q);
      expect(p.status).toBe(m.status);
      if (m.status !== 200) {
        expect(p.body.error.code).toBe(m.body.error.code); // the same refusal (a filter nested too deep…)
        return;
      }
      valid++;
      const problem = sameAnswer(m.body.results, p.body.results);
      if (problem) throw new Error(`${JSON.stringify(q)}: ${problem}`);
    }),
    { numRuns: 150, seed: 15 },
  );
  expect(valid).toBeGreaterThan(100);
}, 120_000);

// Query modes: the platform table's BM25 is computed in Postgres (pgvector-keyword-search.ts) from
// the words and statistics the real backfill stored beside it; the managed one's by FTS5.
const withMode = fc.record(
  {
    query: fc.array(fc.constantFrom(...WORDS, "Pasta", "RIVER", "absent"), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(" ")),
    mode: fc.constantFrom("keyword", "hybrid"),
    limit: fc.integer({ min: 1, max: 100 }),
    min_similarity_score: fc.constantFrom(0, 0.1),
    // Random filters mostly match few rows: half the queries have one, so most answers hold rows.
    filters: fc.option(filter, { freq: 2, nil: undefined }),
  },
  { requiredKeys: ["query", "mode", "filters"] },
);
const near = (a: number | null, b: number | null, tolerance: number) => (a === null || b === null ? a === b : Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(b)));

test("managed and platform answer keyword and hybrid queries alike: same ids, same order, the same BM25", async () => {
  let valid = 0;
  await fc.assert(
    fc.asyncProperty(withMode, async (q) => {
      const m = await w.api.call("POST", `/v1/vector-tables/${managed.id}/query`, q);
      const p = await w.api.call("POST", `/v1/vector-tables/${platform.id}/query`, q);
      expect(p.status).toBe(m.status);
      if (m.status !== 200) return;
      if (m.body.results.length > 0) valid++;
      const problem = sameAnswer(m.body.results, p.body.results);
      const show = (rs: any[]) => rs.map((r) => `${r.id}:${r.keyword_score}:${r.similarity_score.toFixed(4)}`).join(" ");
      if (problem) throw new Error(`${JSON.stringify(q)}: ${problem}\nmanaged  ${show(m.body.results)}\nplatform ${show(p.body.results)}`);
      m.body.results.forEach((r: any, i: number) => {
        const other = p.body.results[i];
        if (other.id !== r.id) return; // a float-rounding swap sameAnswer allowed
        if (!near(other.keyword_score, r.keyword_score, 1e-6) || !near(other.rank_score, r.rank_score, 1e-6)) {
          throw new Error(`${JSON.stringify(q)}: row ${r.id} keyword ${other.keyword_score} ≠ ${r.keyword_score}, rank ${other.rank_score} ≠ ${r.rank_score}`);
        }
      });
    }),
    { numRuns: 100, seed: 16 },
  );
  console.log(`query modes parity: ${valid} of 100 answered rows`);
  expect(valid).toBeGreaterThan(50);
}, 120_000);
