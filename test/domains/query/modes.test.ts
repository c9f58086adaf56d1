// Query `mode` and `vector_weight` over HTTP and tRPC (docs/vector-tables.md#query-modes): the answer
// shapes of each mode, an answer without `mode` exactly as before, and platform tables refusing
// the modes they cannot rank by. The rankings themselves are checked against brute force in
// test/drivers/vector-store/keyword.test.ts.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp, ThrowawayDatabase } from "../../harness.ts";
import { json, type TestOrg } from "../../helpers/organizations.ts";
import { docRows, newTable, seedCollection, setTableState, sourceConnection, tableBody, type Fixture, useTableWorld } from "../vector-tables/helpers.ts";

setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
let table: any;
useTableWorld({}, (w) => ({ app, pg, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "modes" }));
  await seedCollection(app, org, table, docRows());
});

const Q = "pasta hiking";
const ask = (body: Record<string, unknown>, id = table.id) => app.request("POST", `/v1/vector-tables/${id}/query`, { headers: org.owner.key, body: { query: Q, ...body } });
const answer = async (body: Record<string, unknown>) => {
  const res = await ask(body);
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

  test("a platform table: mode keyword or hybrid → 400 naming mode; mode vector answers", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform" });
    const t = await newTable(app, org.owner.key, tableBody({ ...f, connectionId: conn }, { name: "platform-modes" }));
    await setTableState(app, t.id, { syncStatus: "synced" });
    for (const mode of ["keyword", "hybrid"]) {
      const res = await ask({ mode }, t.id);
      const e = (await json(res)).error;
      expect([res.status, e.code, e.details.map((d: { path: string }) => d.path)]).toEqual([400, "validation_error", ["mode"]]);
      expect(e.details[0].message).toContain("platform");
    }
    const res = await ask({ mode: "vector" }, t.id);
    expect(res.status).toBe(200);
  });
});
