// GET /metrics and the access log (docs/operability.md) against the whole service on a real
// socket: what a backfill, a query, a batch pass, a rate-limited provider answer and plain
// requests move, compared with what the fake provider saw and what the store answers; and labels
// that carry ids only.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { eventually } from "../../harness.ts";
import { json } from "../../helpers/organizations.ts";
import { COLUMNS, DIMS, insertDocs, MODEL } from "../sync/world.ts";
import { createMetricsWorld, total, type LogLine, type MetricsWorld, type Sample } from "./world.ts";

setDefaultTimeout(60_000);

const ROWS = 150;
/** Names that must never reach the exposition: it is shared with whoever runs the dashboards. */
const TABLE_NAME = "metrics-private-table-name";
const EMB = { provider: "emb_a", model: MODEL };

let w: MetricsWorld;
let table: { id: string; vectorstore_collection: string };

beforeAll(async () => {
  w = await createMetricsWorld({ rows: ROWS });
  const res = await w.app.request("POST", "/v1/vector-tables", {
    headers: w.org.owner.key,
    body: { name: TABLE_NAME, connection_id: w.connectionId, embedding_provider_id: w.providerId, source_table: "docs", primary_key_column: "id", columns: COLUMNS, embedding_model: MODEL, embedding_dimensions: DIMS },
  });
  expect(res.status).toBe(201);
  table = await json(res);
});
afterAll(() => w[Symbol.asyncDispose]());

const delta = (before: Sample[], after: Sample[], name: string, where: Record<string, string> = {}) => total(after, name, where) - total(before, name, where);

/** The scrape once `ready` holds of it: counters recorded after a response was sent are waited for, not slept on. */
const scrapeWhen = (ready: (samples: Sample[]) => boolean) =>
  eventually(async () => {
    const { samples } = await w.scrape();
    return ready(samples) ? samples : null;
  });

const query = (text: string) => w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: w.org.owner.key, body: { query: text, limit: 3 } });

describe("happy", () => {
  test("a backfill of N rows: requests and tokens move by what the provider saw, rows reach N, one ok backfill pass", async () => {
    const before = (await w.scrape()).samples;
    const seen = { ...w.fake.counters };
    const started = await w.app.request("POST", `/v1/vector-tables/${table.id}/backfill`, { headers: w.org.owner.key });
    expect(started.status).toBe(200);
    const passes = { vector_table_id: table.id, kind: "backfill", outcome: "ok" };
    const after = await scrapeWhen((s) => delta(before, s, "vecsync_sync_passes_total", passes) === 1);

    expect(w.fake.counters.inputs - seen.inputs).toBe(ROWS);
    const served = w.fake.counters.served - seen.served;
    expect(served).toBeGreaterThan(0);
    expect(delta(before, after, "vecsync_embedding_requests_total", { ...EMB, outcome: "ok" })).toBe(served);
    expect(delta(before, after, "vecsync_embedding_requests_total", { ...EMB, outcome: "error" })).toBe(0);
    expect(delta(before, after, "vecsync_embedding_tokens_total", EMB)).toBe(w.fake.counters.tokens - seen.tokens);

    const labels = { org_id: w.org.id, vector_table_id: table.id, sync_mode: "batch" };
    expect(total(after, "vecsync_vector_table_rows", labels)).toBe(ROWS);
    expect(total(after, "vecsync_vector_table_rows_pending", labels)).toBe(0);
    expect(after.some((s) => s.name === "vecsync_vector_table_staleness_seconds" && s.labels.vector_table_id === table.id)).toBe(true);
    expect(total(after, "vecsync_tasks", { task_type: "backfill", status: "completed" })).toBe(1);
    expect(total(after, "vecsync_tasks", { task_type: "backfill", status: "running" })).toBe(0);
  });

  test("a query moves the query histogram by one, under the path the store takes for it", async () => {
    const before = (await w.scrape()).samples;
    const res = await query("title 7");
    expect(res.status).toBe(200);
    expect((await json(res)).results).toHaveLength(3);
    const after = (await w.scrape()).samples;
    // The store's planner, asked the same search (k = 3 over the same collection), names the path.
    const { path } = await w.services.vectors.search(table.vectorstore_collection, { vector: new Float32Array(DIMS).fill(0.5), k: 3 });
    expect(delta(before, after, "vecsync_query_duration_seconds_count", { path })).toBe(1);
    expect(delta(before, after, "vecsync_query_duration_seconds_count")).toBe(1);
    expect(delta(before, after, "vecsync_query_duration_seconds_bucket", { path, le: "+Inf" })).toBe(1);
    expect(delta(before, after, "vecsync_query_duration_seconds_sum", { path })).toBeGreaterThan(0);
    // Its embedding is one more provider request.
    expect(delta(before, after, "vecsync_embedding_requests_total", { ...EMB, outcome: "ok" })).toBe(1);
  });

  test("a batch pass counts as one ok batch pass, and new rows show in the rows gauge", async () => {
    await insertDocs(w.pg.sql, ROWS + 1, ROWS + 10);
    const before = (await w.scrape()).samples;
    expect(await runBatchPass(w.services, table.id)).not.toBeNull();
    const after = (await w.scrape()).samples;
    expect(delta(before, after, "vecsync_sync_passes_total", { vector_table_id: table.id, kind: "batch", outcome: "ok" })).toBe(1);
    expect(total(after, "vecsync_vector_table_rows", { vector_table_id: table.id })).toBe(ROWS + 10);
  });

  test("HTTP requests are counted under their route template and status; a path no route matches under `unmatched`", async () => {
    const before = (await w.scrape()).samples;
    expect((await w.app.request("GET", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key })).status).toBe(200);
    expect((await w.app.request("GET", "/v1/vector-tables/nosuchtable0000000000000", { headers: w.org.owner.key })).status).toBe(404);
    expect((await w.app.request("GET", "/no/such/route/anywhere")).status).toBe(404);
    expect((await w.app.request("GET", "/trpc/tasks.list", { headers: w.org.owner.key })).status).toBe(200);
    const route = "/v1/vector-tables/:vector_table_id";
    const name = "vecsync_http_request_duration_seconds_count";
    const moved = (s: Sample[], labels: Record<string, string>) => delta(before, s, name, labels) === 1;
    const after = await scrapeWhen(
      (s) =>
        moved(s, { method: "GET", route, status: "200" }) &&
        moved(s, { method: "GET", route, status: "404" }) &&
        moved(s, { method: "GET", route: "unmatched", status: "404" }) &&
        moved(s, { method: "GET", route: "/trpc/*", status: "200" }),
    );
    const routes = new Set(after.filter((s) => s.name === name).map((s) => s.labels.route!));
    for (const r of routes) expect(r === "unmatched" || r === "/metrics" || r === "/trpc/*" || r.startsWith("/v1/")).toBe(true);
    expect([...routes].filter((r) => r.includes(table.id) || r.includes("no/such"))).toEqual([]);
  });

  test("a 429 from the provider moves the rate-limited counter and the error outcome; the retry succeeds", async () => {
    const before = (await w.scrape()).samples;
    w.fake.set({ fail429: 1, retryAfterSec: 0 });
    const res = await query("title 9");
    expect(res.status).toBe(200);
    const after = (await w.scrape()).samples;
    expect(delta(before, after, "vecsync_embedding_rate_limited_total", EMB)).toBe(1);
    expect(delta(before, after, "vecsync_embedding_requests_total", { ...EMB, outcome: "error" })).toBe(1);
    expect(delta(before, after, "vecsync_embedding_requests_total", { ...EMB, outcome: "ok" })).toBe(1);
  });

  test("the exposition is the registry's text format with the process defaults", async () => {
    const res = await fetch(`${w.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const text = await res.text();
    for (const name of ["vecsync_vector_table_rows", "vecsync_sync_passes_total", "vecsync_embedding_requests_total", "vecsync_query_duration_seconds", "vecsync_http_request_duration_seconds", "vecsync_tasks", "process_cpu_seconds_total", "process_resident_memory_bytes"]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });
});

describe("security", () => {
  test("labels hold ids and fixed words only: no table, organization or user names, no texts, no keys", async () => {
    const { text, samples } = await w.scrape();
    const values = new Set(samples.flatMap((s) => Object.values(s.labels)));
    for (const name of [TABLE_NAME, w.org.name, w.org.owner.user.email, "docs", "src", "fake-a"]) expect([...values].filter((v) => v.includes(name))).toEqual([]);
    for (const secret of [w.fake.apiKey, w.org.owner.apiKey, "title 7", "body text of row"]) expect(text).not.toContain(secret);
  });
});

describe("access log", () => {
  const lineFor = (id: string) => eventually(() => w.log.find((l): l is LogLine => l.msg === "request" && l.request_id === id));

  test("an invitation's accept token never reaches the access log", async () => {
    const token = "inv_secret_token_0123456789";
    const res = await w.app.request("POST", `/v1/organizations/invitations/${token}/accept`, { headers: w.org.owner.jwt });
    const line = await lineFor(res.headers.get("x-request-id")!);
    expect(line.path).toBe("/v1/organizations/invitations/[redacted]/accept");
    expect(JSON.stringify(w.log)).not.toContain(token);
  });

  test("every access-log line carries a numeric duration_ms: REST, tRPC, unmatched", async () => {
    for (const [path, status] of [["/healthz", 200], ["/trpc/tasks.list", 200], ["/nowhere/at/all", 404]] as const) {
      const res = await w.app.request("GET", path, { headers: w.org.owner.key });
      expect(res.status).toBe(status);
      const line = await lineFor(res.headers.get("x-request-id")!);
      expect(line).toMatchObject({ level: "info", method: "GET", path, status });
      expect(typeof line.duration_ms).toBe("number");
      expect(line.duration_ms as number).toBeGreaterThanOrEqual(0);
    }
    const requests = w.log.filter((l) => l.msg === "request");
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((l) => typeof l.duration_ms !== "number")).toEqual([]);
  });

  test("duration_ms and the histograms measure the whole request: a provider answering after 80 ms shows in all three", async () => {
    const before = (await w.scrape()).samples;
    w.fake.set({ latencyMs: 80 });
    const res = await query("title 11").finally(() => w.fake.set({ latencyMs: 0 }));
    expect(res.status).toBe(200);
    const line = await lineFor(res.headers.get("x-request-id")!);
    // 75, not 80: a timer may fire a millisecond early; a duration measured from the wrong start is far below.
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(75);
    const route = { method: "POST", route: "/v1/vector-tables/:vector_table_id/query", status: "200" };
    const after = await scrapeWhen((s) => delta(before, s, "vecsync_http_request_duration_seconds_count", route) === 1);
    expect(delta(before, after, "vecsync_http_request_duration_seconds_sum", route)).toBeGreaterThanOrEqual(0.075);
    expect(delta(before, after, "vecsync_query_duration_seconds_sum")).toBeGreaterThanOrEqual(0.075);
  });
});
