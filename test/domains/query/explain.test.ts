// `explain: true` on POST /v1/vector-tables/{id}/query (docs/vector-tables.md#explain): the path the
// managed store took and figures consistent with it, the two wall times, and no `explain` unless asked.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { collectionName } from "../../../src/domains/vector-tables/render.ts";
import { eventually, type TestApp } from "../../harness.ts";
import { json, type TestOrg } from "../../helpers/organizations.ts";
import { newTable, seedCollection, tableBody, type DocRow, type Fixture, useTableWorld } from "../vector-tables/helpers.ts";

// Starts processes or databases and builds a 3,000-row index: slower than bun's 5 s default.
setDefaultTimeout(60_000);

/** Above the planner's 2,048 rows, so an unfiltered query goes through HNSW; every 150th row `rare`. */
const N = 3000;
const topics = ["vector search engines", "postgres replication slots", "embedding models and tokens", "cooking pasta at home", "mountain hiking trails", "river boats"];
const rows: DocRow[] = Array.from({ length: N }, (_, i) => ({
  id: i + 1,
  title: `${topics[i % topics.length]} part ${i % 17}`,
  body: `notes ${i % 23} about ${topics[(i * 7) % topics.length]} with ${["alpha", "beta", "gamma", "delta"][i % 4]} ${i}`,
  category: i % 150 === 0 ? "rare" : ["tech", "news", "food"][i % 3]!,
  price: (i * 7.5) % 100,
  stock: i % 20,
  active: i % 2 === 0,
}));
const RARE = rows.filter((r) => r.category === "rare").length;

let app: TestApp, org: TestOrg, f: Fixture;
let table: any;
useTableWorld({}, (w) => ({ app, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "explained" }));
  await seedCollection(app, org, table, rows);
  await app.services.vectors.whenReady(collectionName(table.id, table.name));
});

const Q = "vector search engines notes";
const ask = (body: Record<string, unknown>) => app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: org.owner.key, body: { query: Q, ...body } });
const answer = async (body: Record<string, unknown>) => {
  const res = await ask(body);
  const got = await json(res);
  expect([res.status, got.error]).toEqual([200, undefined]);
  return got;
};

describe("happy", () => {
  test("without explain, or with explain false, the answer has no explain", async () => {
    expect("explain" in (await answer({}))).toBe(false);
    expect("explain" in (await answer({ explain: false }))).toBe(false);
  });

  test("unfiltered: hnsw, every live row estimated, at least `limit` candidates, the recall measured once the explained query has started the calibration", async () => {
    const first = (await answer({ limit: 20, explain: true })).explain;
    expect(Object.keys(first).sort()).toEqual(["candidates_examined", "embedding_ms", "estimated_matches", "expected_recall", "path", "search_ms"]);
    expect(first).toMatchObject({ path: "hnsw", estimated_matches: N });
    expect(first.candidates_examined).toBeGreaterThanOrEqual(20);
    expect(first.candidates_examined).toBeLessThan(N);
    for (const ms of [first.embedding_ms, first.search_ms]) {
      expect(typeof ms).toBe("number");
      expect(ms).toBeGreaterThanOrEqual(0);
    }
    // The first explained search found no measurement: it started one in the background.
    const measured = await eventually(async () => {
      const e = (await answer({ limit: 20, explain: true })).explain;
      return e.expected_recall !== null && e;
    }, 30_000, 50);
    expect(measured.path).toBe("hnsw");
    expect(measured.expected_recall).toBeGreaterThan(0);
    expect(measured.expected_recall).toBeLessThanOrEqual(1);
  });

  test("a very selective filter: exact, its matches counted, those rows scored, recall 1", async () => {
    const got = await answer({ filters: { category: "rare" }, limit: 5, explain: true });
    expect(got.total_results).toBe(5);
    expect(got.explain).toMatchObject({ path: "exact", estimated_matches: RARE, candidates_examined: RARE, expected_recall: 1 });
    expect(got.explain.search_ms).toBeGreaterThanOrEqual(0);
  });

  test("explaining changes nothing else in the answer", async () => {
    const body = { filters: { category: "tech" }, limit: 7 };
    const { explain, ...rest } = await answer({ ...body, explain: true });
    expect(explain.path).toMatch(/^(hnsw|exact)$/);
    expect(rest).toEqual(await answer(body));
  });

  test("tRPC query.search explains too", async () => {
    const res = await app.request("POST", "/trpc/query.search", { headers: org.owner.key, body: { vector_table_id: table.id, query: Q, filters: { category: "rare" }, explain: true } });
    expect(res.status).toBe(200);
    expect((await json(res)).result.data.explain).toMatchObject({ path: "exact", estimated_matches: RARE, candidates_examined: RARE, expected_recall: 1 });
  });
});

describe("errors", () => {
  test("explain not a boolean → 400 validation_error naming it", async () => {
    const res = await ask({ explain: "yes" });
    const e = (await json(res)).error;
    expect([res.status, e.code, e.details.map((d: { path: string }) => d.path)]).toEqual([400, "validation_error", ["explain"]]);
  });
});
