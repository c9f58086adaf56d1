// Query `mode` and `vector_weight` over HTTP and tRPC (docs/vector-tables.md#query-modes): the answer
// shapes of each mode, an answer without `mode` exactly as before, a Postgres platform table
// answering every mode as a managed one over the same rows, and one from before keyword search
// refusing keyword and hybrid (the warehouse's refusal: test/e2e/warehouse-platform-provider.test.ts). The rankings themselves are checked against brute force in
// test/drivers/vector-store/keyword.test.ts.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp, ThrowawayDatabase } from "../../harness.ts";
import { json, type TestOrg } from "../../helpers/organizations.ts";
import { docRows, newTable, seedCollection, setTableState, sourceConnection, tableBody, type Fixture, useTableWorld } from "../vector-tables/helpers.ts";

setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
let table: any;
let platform: any;
useTableWorld({}, (w) => ({ app, pg, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "modes" }));
  await seedCollection(app, org, table, docRows());
});

const Q = "pasta hiking";
const ask = (body: Record<string, unknown>, id: string = table.id) => app.request("POST", `/v1/vector-tables/${id}/query`, { headers: org.owner.key, body: { query: Q, ...body } });
const answer = async (body: Record<string, unknown>, id?: string) => {
  const res = await ask(body, id);
  const got = await json(res);
  expect([res.status, got.error]).toEqual([200, undefined]);
  return got;
};
const descending = (xs: number[]) => xs.every((x, i) => i === 0 || xs[i - 1]! >= x);

describe("happy", () => {
  test("without mode: the answer as before, no keyword_score or rank_score", async () => {
    const got = await answer({ limit: 5 });
    for (const r of got.results) expect(Object.keys(r).sort()).toEqual(["embedded_text", "id", "metadata", "similarity_score"]);
  });

  test("mode vector: the same results, each with its BM25 (null without a word) and rank_score = similarity_score", async () => {
    const plain = await answer({ limit: 10 });
    const got = await answer({ limit: 10, mode: "vector" });
    expect(got.results.map((r: any) => r.id)).toEqual(plain.results.map((r: any) => r.id));
    for (const r of got.results) {
      expect(r.rank_score).toBe(r.similarity_score);
      const matches = /pasta|hiking/i.test(r.embedded_text);
      expect(r.keyword_score === null).toBe(!matches);
    }
  });

  test("mode keyword: only rows with a word, by BM25, filters exact, explain path keyword", async () => {
    const got = await answer({ limit: 100, mode: "keyword", filters: { category: { in: ["food", "tech"] } }, explain: true });
    expect(got.total_results).toBeGreaterThan(0);
    for (const r of got.results) {
      expect(/pasta|hiking/i.test(r.embedded_text)).toBe(true);
      expect(["food", "tech"]).toContain(r.metadata.category);
      expect(r.rank_score).toBe(r.keyword_score);
      expect(typeof r.similarity_score).toBe("number");
    }
    expect(descending(got.results.map((r: any) => r.rank_score))).toBe(true);
    expect(got.explain).toMatchObject({ path: "keyword", estimated_matches: got.total_results, expected_recall: 1 });
  });

  test("a vector_weight beside mode keyword or none is accepted and changes nothing", async () => {
    const keyword = await answer({ limit: 10, mode: "keyword" });
    expect((await answer({ limit: 10, mode: "keyword", vector_weight: 0.9 })).results).toEqual(keyword.results);
    const plain = await answer({ limit: 10 });
    expect((await answer({ limit: 10, vector_weight: 0.1 })).results).toEqual(plain.results);
  });

  test("mode keyword, a text with no words: no results, not an error", async () => {
    expect((await answer({ query: "?!", mode: "keyword" })).results).toEqual([]);
  });

  test("mode hybrid: fused order; vector_weight 1 keeps the vector order; explain path hybrid", async () => {
    const got = await answer({ limit: 10, mode: "hybrid", explain: true });
    expect(got.total_results).toBe(10);
    expect(descending(got.results.map((r: any) => r.rank_score))).toBe(true);
    for (const r of got.results) expect(r.keyword_score === null || typeof r.keyword_score === "number").toBe(true);
    expect(got.explain.path).toBe("hybrid");
    const vectorOnly = await answer({ limit: 10, mode: "hybrid", vector_weight: 1 });
    const plain = await answer({ limit: 10 });
    expect(vectorOnly.results.map((r: any) => r.id)).toEqual(plain.results.map((r: any) => r.id));
    expect(vectorOnly.results[0].rank_score).toBeCloseTo(1 / 61, 12);
  });

  test("tRPC query.search takes mode and vector_weight", async () => {
    const res = await app.request("POST", "/trpc/query.search", { headers: org.owner.key, body: { vector_table_id: table.id, query: Q, mode: "hybrid", vector_weight: 0.2, limit: 3 } });
    expect(res.status).toBe(200);
    const results = (await json(res)).result.data.results;
    expect(results.length).toBe(3);
    expect(Object.keys(results[0]).sort()).toEqual(["embedded_text", "id", "keyword_score", "metadata", "rank_score", "similarity_score"]);
  });
});

describe("errors", () => {
  test.each([
    [{ mode: "fuzzy" }, "mode"],
    [{ mode: "hybrid", vector_weight: 1.5 }, "vector_weight"],
    [{ mode: "hybrid", vector_weight: -0.1 }, "vector_weight"],
  ])("%p → 400 validation_error naming %s", async (body, path) => {
    const res = await ask(body);
    const e = (await json(res)).error;
    expect([res.status, e.code, e.details.map((d: { path: string }) => d.path)]).toEqual([400, "validation_error", [path]]);
  });

  test("a Postgres platform table from before keyword search: keyword and hybrid → 400 naming mode and saying how; vector answers null keyword scores", async () => {
    const t = await platformTable("platform-legacy");
    const [live] = await pg.sql.unsafe(`SELECT obj_description('${t.platform_vector_ref}'::regclass, 'pg_class') AS c`);
    const { keyword: _, ...comment } = JSON.parse(live!.c);
    await pg.sql.unsafe(`ALTER TABLE ${t.platform_vector_ref} DROP COLUMN vecsync_terms, DROP COLUMN vecsync_length; COMMENT ON TABLE ${t.platform_vector_ref} IS '${JSON.stringify(comment)}'`);
    for (const mode of ["keyword", "hybrid"]) {
      const res = await ask({ mode }, t.id);
      const e = (await json(res)).error;
      expect([res.status, e.code, e.details.map((d: { path: string }) => d.path)]).toEqual([400, "validation_error", ["mode"]]);
      expect(e.details[0].message).toContain("backfill");
    }
    const got = await answer({ mode: "vector" }, t.id);
    expect(got.total_results).toBeGreaterThan(0);
    for (const r of got.results) expect([r.keyword_score, r.rank_score]).toEqual([null, r.similarity_score]);
  });
});

/** A platform table on the source Postgres, holding what a backfill of docRows() writes. */
async function platformTable(name: string) {
  await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
  const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform", name: `conn-${name}` });
  const t = await newTable(app, org.owner.key, tableBody({ ...f, connectionId: conn }, { name }));
  await seedCollection(app, org, t, docRows());
  return t;
}

describe("platform tables on Postgres", () => {
  const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)));
  test.each([
    [{ mode: "keyword", limit: 100 }],
    [{ mode: "keyword", limit: 3, filters: { category: { in: ["food", "tech"] } } }],
    [{ mode: "hybrid", limit: 10 }],
    [{ mode: "hybrid", limit: 5, vector_weight: 0.2, min_similarity_score: 0 }],
    [{ mode: "vector", limit: 10 }],
  ])("%p answers as the managed table over the same rows does (BM25 computed in the database)", async (body) => {
    const t = platform ?? (platform = await platformTable("platform-modes"));
    const want = await answer({ ...body, explain: true });
    const got = await answer({ ...body, explain: true }, t.id);
    expect(got.results.map((r: any) => r.id)).toEqual(want.results.map((r: any) => r.id));
    got.results.forEach((r: any, i: number) => {
      const w = want.results[i];
      expect([close(r.keyword_score, w.keyword_score), close(r.rank_score, w.rank_score), r.embedded_text, r.metadata]).toEqual([true, true, w.embedded_text, w.metadata]);
      expect(r.similarity_score).toBeCloseTo(w.similarity_score, 5);
    });
    if (body.mode !== "vector") expect(got.results.length).toBeGreaterThan(0);
    expect(got.explain.path).toBe(body.mode === "vector" ? "platform" : body.mode);
  });
});
