// @vecsync/client's calls against the service (in process, through the client's `fetch` option):
// a typed table query answers what REST answers, and the service's errors come back as REST tells them.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createVecsyncClient, vecsyncError, vectorTable, type VecsyncClient, type VecsyncFetch } from "../../packages/client/src/index.ts";
import type { TestApp } from "../harness.ts";
import { json, type TestOrg } from "../helpers/organizations.ts";
import { docRows, newTable, seedCollection, tableBody, useTableWorld, type Fixture } from "../domains/vector-tables/helpers.ts";

// Starts Postgres and the app: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

type Docs = { category: "keyword"; price: "float"; stock: "integer"; active: "boolean" };

let app: TestApp, org: TestOrg, f: Fixture;
let table: { id: string; environment_id: string; [k: string]: any };
useTableWorld({}, (w) => ({ app, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "client-docs" }));
  await seedCollection(app, org, table as any, docRows());
});

/** The app in process as the client's fetch: same requests, no socket. */
function clientFor(opts: { apiKey?: string; headers?: Record<string, string> } = {}): VecsyncClient {
  const fetch: VecsyncFetch = (input, init) => {
    const url = new URL(input);
    return app.request(init.method ?? "GET", url.pathname + url.search, { headers: init.headers ?? {}, ...(init.body === undefined ? {} : { rawBody: init.body }) });
  };
  return createVecsyncClient({ url: "http://vecsync.test/", apiKey: opts.apiKey ?? org.owner.apiKey, fetch, ...(opts.headers ? { headers: opts.headers } : {}) });
}

describe("happy", () => {
  test("a typed table query answers what REST answers, metadata typed by the table's columns", async () => {
    const body = { query: "vector search engines", limit: 5, filters: { category: ["tech", "news"], price: { gte: 5 }, $or: [{ active: true }, { stock: { lte: 10 } }] } } as const;
    const answer = await vectorTable<Docs>(clientFor(), table.id).query(body);
    const rest = await json(await app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: org.owner.key, body }));
    expect(answer).toEqual(rest);
    expect(answer.results.length).toBeGreaterThan(0);
    for (const hit of answer.results) {
      const price: number | null = hit.metadata.price;
      expect(price).toBeGreaterThanOrEqual(5);
      expect(["tech", "news"]).toContain(hit.metadata.category!);
    }
  });

  test("headers ride along: X-Environment-Id narrows as on REST", async () => {
    const scoped = clientFor({ headers: { "X-Environment-Id": table.environment_id } });
    expect((await scoped.vectorTables.list.query()).data.map((t) => t.id)).toContain(table.id);
    const elsewhere = clientFor({ headers: { "X-Environment-Id": "0000000000000000000000000a" } });
    expect(vecsyncError(await elsewhere.vectorTables.list.query().catch((e: unknown) => e))).toMatchObject({ code: "not_found", status: 404 });
  });
});

describe("errors", () => {
  test("a filter the service refuses: the REST error, code, status and every problem", async () => {
    const client = clientFor();
    const err = await client.query.search.mutate({ vector_table_id: table.id, query: "q", filters: { colour: "red", stock: { eq: 2.5 } } }).catch((e: unknown) => e);
    expect(vecsyncError(err)).toMatchObject({
      code: "validation_error",
      status: 400,
      details: [
        { path: "filters.colour", message: 'unknown filter column "colour"' },
        { path: "filters.stock.eq", message: "expected an integer (integer column)" },
      ],
    });
  });

  test("an unknown table is not found; a wrong key is unauthorized", async () => {
    const client = clientFor();
    expect(vecsyncError(await vectorTable(client, "0000000000000000000000000a").query({ query: "q" }).catch((e: unknown) => e))).toMatchObject({ code: "not_found", status: 404 });
    const stranger = clientFor({ apiKey: "vsk_not_a_key" });
    expect(vecsyncError(await stranger.tasks.list.query().catch((e: unknown) => e))).toMatchObject({ code: "unauthorized", status: 401 });
  });

  test("anything that is not the service's answer is not a vecsync error", async () => {
    const broken = createVecsyncClient({ url: "http://vecsync.test", fetch: () => Promise.reject(new TypeError("network down")) });
    const err = await broken.health.query().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(vecsyncError(err)).toBeNull();
    expect(vecsyncError(new Error("x"))).toBeNull();
  });
});
