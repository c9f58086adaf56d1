// POST /v1/vector-tables/{id}/query (docs/vector-tables.md#query) against a collection holding exactly
// what a backfill writes (seeded through render.ts and the local provider), checked against a
// brute-force expectation: ids, order (ties by primary key, numerically), scores, every filter
// operator, $or, shorthand, min score, limit.
import { beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { providerForEmbedding } from "../../../src/domains/embedding-providers/embedding.ts";
import { renderMetadata, renderText } from "../../../src/domains/vector-tables/render.ts";
import type { SourceValue } from "../../../src/drivers/sources/types.ts";
import { type TestApp } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type Bearer, type TestOrg } from "../../helpers/organizations.ts";
import { DOC_COLUMNS, docRows, newTable, seedCollection, tableBody, type DocRow, type Fixture, useTableWorld } from "../vector-tables/helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let app: TestApp, org: TestOrg, f: Fixture;
let table: any;
const rows = docRows();
const docVectors = new Map<number, Float32Array>();

useTableWorld({}, (w) => ({ app, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "docs" }));
  await seedCollection(app, org, table, rows);
  const provider = await providerForEmbedding(app.services, org.id, table.embedding_provider_id);
  const withText = rows.filter((r) => text(r) !== null);
  const vectors = await provider.embed(withText.map((r) => text(r)!), { model: table.embedding_model, dimensions: table.embedding_dimensions, kind: "document" });
  withText.forEach((r, i) => docVectors.set(r.id, vectors[i]!));
});

const values = (r: DocRow) => r as unknown as Record<string, SourceValue>;
const text = (r: DocRow) => renderText(DOC_COLUMNS, values(r));

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) (dot += a[i]! * b[i]!), (na += a[i]! * a[i]!), (nb += b[i]! * b[i]!);
  return dot / Math.sqrt(na * nb);
}

type Expectation = { where?: (r: DocRow) => boolean; limit?: number; minScore?: number };

/** Every row with text that passes `where`, scored against the query, best first, ties by id. */
async function bruteForce(query: string, e: Expectation = {}) {
  const provider = await providerForEmbedding(app.services, org.id, table.embedding_provider_id);
  const [q] = await provider.embed([query], { model: table.embedding_model, dimensions: table.embedding_dimensions, kind: "query" });
  return rows
    .filter((r) => docVectors.has(r.id) && (e.where?.(r) ?? true))
    .map((r) => ({ r, score: cosine(q!, docVectors.get(r.id)!) }))
    .filter((x) => x.score >= (e.minScore ?? -Infinity))
    .sort((a, b) => b.score - a.score || a.r.id - b.r.id)
    .slice(0, e.limit ?? 10);
}

const ask = (body: unknown, headers: Bearer | Record<string, string> = org.owner.key, id = table.id) => app.request("POST", `/v1/vector-tables/${id}/query`, { headers, body });

async function expectExact(body: { query: string; [k: string]: unknown }, e: Expectation) {
  const res = await ask(body);
  const answer = await json(res);
  expect([res.status, answer.error]).toEqual([200, undefined]);
  const expected = await bruteForce(body.query, e);
  expect(answer.results.map((x: { id: string }) => x.id)).toEqual(expected.map((x) => String(x.r.id)));
  answer.results.forEach((got: any, i: number) => {
    const want = expected[i]!;
    expect(Math.abs(got.similarity_score - want.score)).toBeLessThan(1e-3);
    expect(got.metadata).toEqual(renderMetadata(DOC_COLUMNS, values(want.r)));
    expect(got.embedded_text).toBe(text(want.r)!);
  });
  expect(answer).toMatchObject({ query: body.query, model: "local-lexical-v1", total_results: expected.length });
  return answer;
}

const Q = "vector search engines notes";

describe("happy", () => {
  test("no filter: default limit 10, best first, exact scores, metadata and embedded text", async () => {
    const a = await expectExact({ query: Q }, {});
    expect(a.results).toHaveLength(10);
    expect(Object.keys(a.results[0]).sort()).toEqual(["embedded_text", "id", "metadata", "similarity_score"]);
    // No pass recorded (the collection was seeded): synced_through is there, and null.
    expect(Object.keys(a).sort()).toEqual(["model", "query", "results", "synced_through", "total_results"]);
    expect(a.synced_through).toBeNull();
  });

  test("ties in score are broken by primary key numerically (3, 20, 100)", async () => {
    const a = await expectExact({ query: "identical twin text same words exactly", limit: 3 }, { limit: 3 });
    expect(a.results.map((x: { id: string }) => x.id)).toEqual(["3", "20", "100"]);
    expect(new Set(a.results.map((x: { similarity_score: number }) => x.similarity_score)).size).toBe(1);
  });

  test.each([
    ["limit 1", { limit: 1 }, { limit: 1 }],
    ["limit 100 (more than the rows)", { limit: 100 }, { limit: 100 }],
    ["min_similarity_score", { limit: 100, min_similarity_score: 0.3 }, { limit: 100, minScore: 0.3 }],
    ["min_similarity_score 1 (only perfect matches)", { min_similarity_score: 1 }, { minScore: 1 - 1e-6 }],
    ["filters null", { filters: null }, {}],
  ] as const)("%s", async (_, body, e) => {
    await expectExact({ query: Q, ...body }, e);
  });

  const near = (v: number | null, x: number) => v !== null && Math.abs(v - x) < 1e-9;
  test.each([
    ["eq keyword", { category: { eq: "tech" } }, (r: DocRow) => r.category === "tech"],
    ["shorthand eq", { category: "news" }, (r: DocRow) => r.category === "news"],
    ["neq (nulls match)", { category: { neq: "tech" } }, (r: DocRow) => r.category !== "tech"],
    ["gt float", { price: { gt: 50 } }, (r: DocRow) => r.price !== null && r.price > 50],
    ["gte float with an integer value", { price: { gte: 45 } }, (r: DocRow) => r.price !== null && r.price >= 45],
    ["lt integer", { stock: { lt: 6 } }, (r: DocRow) => r.stock !== null && r.stock < 6],
    ["lte integer", { stock: { lte: 6 } }, (r: DocRow) => r.stock !== null && r.stock <= 6],
    ["range (two operators AND)", { price: { gte: 20, lt: 60 } }, (r: DocRow) => r.price !== null && r.price >= 20 && r.price < 60],
    ["eq float", { price: { eq: 10 } }, (r: DocRow) => near(r.price, 10)],
    ["in", { category: { in: ["food", "news"] } }, (r: DocRow) => r.category === "food" || r.category === "news"],
    ["shorthand in", { stock: [3, 6, 9] }, (r: DocRow) => r.stock !== null && [3, 6, 9].includes(r.stock)],
    ["nin (nulls match)", { category: { nin: ["food", "news"] } }, (r: DocRow) => r.category !== "food" && r.category !== "news"],
    ["exists true", { price: { exists: true } }, (r: DocRow) => r.price !== null],
    ["exists false", { category: { exists: false } }, (r: DocRow) => r.category === null],
    ["boolean eq", { active: { eq: true } }, (r: DocRow) => r.active === true],
    ["boolean neq (nulls match)", { active: { neq: true } }, (r: DocRow) => r.active !== true],
    ["several keys AND", { category: "tech", active: false }, (r: DocRow) => r.category === "tech" && r.active === false],
    ["$or", { $or: [{ category: "food" }, { price: { gt: 80 } }] }, (r: DocRow) => r.category === "food" || (r.price !== null && r.price > 80)],
    [
      "$or beside a key, nested $or",
      { active: true, $or: [{ stock: { lt: 4 } }, { $or: [{ category: { exists: false } }, { category: "news" }] }] },
      (r: DocRow) => r.active === true && ((r.stock !== null && r.stock < 4) || r.category === null || r.category === "news"),
    ],
    ["nothing matches", { category: "nope" }, () => false],
  ] as const)("filter: %s", async (_, filters, where) => {
    await expectExact({ query: Q, filters, limit: 100 }, { where, limit: 100 });
  });

  test("a read_only key may query; the matching X-Environment-Id is accepted", async () => {
    const ro = await readOnlyKey(app, org.owner);
    expect((await ask({ query: Q }, ro)).status).toBe(200);
    expect((await ask({ query: Q }, { ...org.owner.key, "x-environment-id": table.environment_id })).status).toBe(200);
  });

  test("tRPC query.search answers the same results", async () => {
    const rest = await json(await ask({ query: Q, filters: { category: "tech" }, limit: 5 }));
    const res = await app.request("POST", "/trpc/query.search", { headers: org.owner.key, body: { vector_table_id: table.id, query: Q, filters: { category: "tech" }, limit: 5 } });
    expect(res.status).toBe(200);
    expect((await json(res)).result.data).toEqual(rest);
  });
});

describe("errors", () => {
  const bad = async (body: unknown) => {
    const res = await ask(body);
    const e = (await json(res)).error;
    return { status: res.status, code: e?.code, paths: Array.isArray(e?.details) ? e.details.map((d: { path: string }) => d.path) : [] };
  };

  test.each([
    ["missing query", { limit: 3 }, ["query"]],
    ["empty query", { query: "" }, ["query"]],
    ["blank query", { query: "   " }, ["query"]],
    ["limit 0", { query: Q, limit: 0 }, ["limit"]],
    ["limit 101", { query: Q, limit: 101 }, ["limit"]],
    ["limit 2.5", { query: Q, limit: 2.5 }, ["limit"]],
    ["min_similarity_score 1.5", { query: Q, min_similarity_score: 1.5 }, ["min_similarity_score"]],
    ["min_similarity_score -0.1", { query: Q, min_similarity_score: -0.1 }, ["min_similarity_score"]],
    ["filters not an object", { query: Q, filters: "tech" }, ["filters"]],
    ["unknown filter column", { query: Q, filters: { colour: "red" } }, ["filters.colour"]],
    ["unknown operator", { query: Q, filters: { price: { between: [1, 2] } } }, ["filters.price.between"]],
    ["gt on a keyword column", { query: Q, filters: { category: { gt: "a" } } }, ["filters.category.gt"]],
    ["a string on an integer column", { query: Q, filters: { stock: { eq: "5" } } }, ["filters.stock.eq"]],
    ["a float on an integer column", { query: Q, filters: { stock: { eq: 2.5 } } }, ["filters.stock.eq"]],
    ["eq null", { query: Q, filters: { category: { eq: null } } }, ["filters.category.eq"]],
    ["empty $or", { query: Q, filters: { $or: [] } }, ["filters.$or"]],
    ["a bad branch inside $or", { query: Q, filters: { $or: [{ category: "tech" }, { nope: 1 }] } }, ["filters.$or[1].nope"]],
    ["an unknown field", { query: Q, top_k: 5 }, ["top_k"]],
  ] as const)("%s → 400 validation_error naming the path", async (_, body, paths) => {
    expect(await bad(body)).toEqual({ status: 400, code: "validation_error", paths: [...paths] });
  });

  test("a filter nested deeper than 5 levels, or with more than 50 conditions → 400", async () => {
    let deep: Record<string, unknown> = { category: "tech" };
    for (let i = 0; i < 6; i++) deep = { $or: [deep] };
    expect((await bad({ query: Q, filters: deep })).status).toBe(400);
    const many = { $or: Array.from({ length: 51 }, (_, i) => ({ stock: i })) };
    expect((await bad({ query: Q, filters: many })).status).toBe(400);
  });

  test("an unknown vector table, or another environment in X-Environment-Id → 404", async () => {
    expect((await ask({ query: Q }, org.owner.key, "0000000000000000000000000a")).status).toBe(404);
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "elsewhere" } }));
    const res = await ask({ query: Q }, { ...org.owner.key, "x-environment-id": env.id });
    expect([res.status, (await json(res)).error.code]).toEqual([404, "not_found"]);
  });
});

describe("authz", () => {
  test("another organization's key → 404, never 403", async () => {
    const other = await newOrganization(app);
    const res = await ask({ query: Q }, other.owner.key);
    expect([res.status, (await json(res)).error.code]).toEqual([404, "not_found"]);
  });

  test("a JWT instead of a key → 401", async () => {
    expect((await ask({ query: Q }, org.owner.jwt)).status).toBe(401);
  });
});
