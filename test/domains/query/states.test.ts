// Which table states answer queries (docs/vector-tables.md#query), and what a failing provider does to a query:
// the fake emb_a server records the wire request (a query embedding, the served model) and
// refuses a wrong key (502 provider_error without the key in the answer).
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, type TestOrg } from "../../helpers/organizations.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { docRows, newTable, seedCollection, setTableState, sourceConnection, tableBody, type Fixture, useTableWorld } from "../vector-tables/helpers.ts";
import type { SyncStatus } from "../../../src/domains/vector-tables/tables.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
let fake: FakeEmbeddings;
let table: any;
useTableWorld({}, (w) => ({ app, pg, org, f } = w));
beforeAll(async () => {
  fake = await startFakeEmbeddings("emb_a");
  table = await newTable(app, org.owner.key, tableBody(f));
  await seedCollection(app, org, table, docRows().slice(0, 10));
});
afterAll(async () => {
  await fake.stop();
});

const ask = (id: string, body: unknown = { query: "vector search" }) => app.request("POST", `/v1/vector-tables/${id}/query`, { headers: org.owner.key, body });

async function emaProvider(apiKey: string): Promise<string> {
  const res = await app.request("POST", "/v1/embedding-providers", { headers: org.owner.key, body: { name: `fake-${crypto.randomUUID().slice(0, 6)}`, provider: "emb_a", api_key: apiKey, base_url: fake.url } });
  return (await json(res)).id;
}

describe("happy", () => {
  test.each(["synced", "backfilling", "paused", "pending_rebackfill"] as const)("%s answers from the stored vectors", async (state: SyncStatus) => {
    await setTableState(app, table.id, { syncStatus: state });
    const res = await ask(table.id);
    expect(res.status).toBe(200);
    expect((await json(res)).total_results).toBe(10);
  });

  test("a hosted provider is asked for a query embedding of the served model at the served size", async () => {
    const t = await newTable(app, org.owner.key, tableBody({ ...f, providerId: await emaProvider(fake.apiKey) }, { embedding_model: "text-embedding-3-small", embedding_dimensions: 32 }));
    await setTableState(app, t.id, { syncStatus: "synced" });
    fake.requests.length = 0;
    const res = await ask(t.id);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ results: [], query: "vector search", model: "text-embedding-3-small", total_results: 0, synced_through: null });
    expect(fake.requests.map((r) => r.decoded && { model: r.decoded.model, texts: r.decoded.texts, dims: r.decoded.dims })).toEqual([{ model: "text-embedding-3-small", texts: ["vector search"], dims: 32 }]);
  });

  test("after a PUT, until the rebackfill swaps, queries embed with the model of the stored vectors", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f, { embedding_dimensions: 64 }));
    await seedCollection(app, org, t, docRows().slice(0, 5));
    const put = await app.request("PUT", `/v1/vector-tables/${t.id}`, { headers: org.owner.key, body: { embedding_dimensions: 128 } });
    expect((await json(put)).sync_status).toBe("pending_rebackfill");
    const res = await ask(t.id);
    expect([res.status, (await json(res)).total_results]).toEqual([200, 5]);
  });
});

describe("error with a serving generation (CONTRACT 7: a failure never takes stored vectors offline)", () => {
  test("after a completed fill (a failed sync or re-backfill) → answered from the stored vectors", async () => {
    await setTableState(app, table.id, { syncStatus: "error", lastError: "source unreachable", lastSyncAt: new Date().toISOString() });
    const res = await ask(table.id);
    expect([res.status, (await json(res)).total_results]).toEqual([200, 10]);
  });

  test("a first backfill that stored rows before failing → answered from them, as while it ran", async () => {
    await setTableState(app, table.id, { syncStatus: "error", lastError: "source unreachable", lastSyncAt: null });
    const res = await ask(table.id);
    expect([res.status, (await json(res)).total_results]).toEqual([200, 10]);
  });

  test("a completed fill of an empty source → answered, with no results", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await setTableState(app, t.id, { syncStatus: "error", lastError: "source unreachable", lastSyncAt: new Date().toISOString() });
    const res = await ask(t.id);
    expect([res.status, (await json(res)).total_results]).toEqual([200, 0]);
  });
});

describe("errors", () => {
  test("pending → 409 vector_table_not_ready, even with vectors stored", async () => {
    await setTableState(app, table.id, { syncStatus: "pending", lastError: null, lastSyncAt: null });
    const res = await ask(table.id);
    const e = (await json(res)).error;
    expect([res.status, e.code]).toEqual([409, "vector_table_not_ready"]);
    expect(e.message).toContain("has no vectors yet");
  });

  test("error with nothing stored and no fill ever completed → 409 vector_table_not_ready with last_error", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await setTableState(app, t.id, { syncStatus: "error", lastError: "source unreachable", lastSyncAt: null });
    const res = await ask(t.id);
    const e = (await json(res)).error;
    expect([res.status, e.code]).toEqual([409, "vector_table_not_ready"]);
    expect(e.message).toContain("is in error with no vectors stored (source unreachable)");
  });

  test("a provider that refuses the key → 502 provider_error with its words, never the key", async () => {
    const t = await newTable(app, org.owner.key, tableBody({ ...f, providerId: await emaProvider("sk-wrong-key-must-not-leak") }, { embedding_model: "text-embedding-3-small", embedding_dimensions: 32 }));
    await setTableState(app, t.id, { syncStatus: "synced" });
    const res = await ask(t.id);
    const text = await res.text();
    expect(res.status).toBe(502);
    expect(JSON.parse(text).error.code).toBe("provider_error");
    expect(text).toContain("Incorrect API key");
    expect(text).not.toContain("sk-wrong-key-must-not-leak");
  });

  test("a platform-mode table: pending → 409 vector_table_not_ready; its platform table dropped by hand → 409 saying a backfill makes it again", async () => {
    await pg.sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const conn = await sourceConnection(app, org.owner.key, pg, { mode: "platform" });
    const t = await newTable(app, org.owner.key, tableBody({ ...f, connectionId: conn }, { name: "platform-states" }));
    const pending = await ask(t.id);
    expect([pending.status, (await json(pending)).error.code]).toEqual([409, "vector_table_not_ready"]);
    await setTableState(app, t.id, { syncStatus: "synced" });
    const empty = await ask(t.id, { query: "vector search", explain: true });
    const answered = await json(empty);
    expect([empty.status, answered.total_results]).toEqual([200, 0]);
    // The platform's own planner answered: its estimates and recall are not vecsync's to report.
    expect(answered.explain).toMatchObject({ path: "platform", estimated_matches: null, candidates_examined: null, expected_recall: null });
    expect([answered.explain.embedding_ms >= 0, answered.explain.search_ms >= 0]).toEqual([true, true]);
    await pg.sql.unsafe(`DROP TABLE ${t.platform_vector_ref}`);
    const gone = await ask(t.id);
    const body = await json(gone);
    expect([gone.status, body.error.code]).toEqual([409, "vector_table_not_ready"]);
    expect(body.error.message).toContain("backfill");
  });
});
