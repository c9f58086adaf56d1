// Error shapes, request ids, body limits and the 500 boundary, over real HTTP (docs/api.md#errors).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type } from "arktype";
import { buildApp } from "../../src/http/app.ts";
import { defineRoute } from "../../src/http/route.ts";
import { AppError } from "../../src/shared/errors.ts";
import { createTestApp, type TestApp } from "../harness.ts";
import { json } from "../helpers/http.ts";

const Echo = type({ name: "1 <= string <= 10", "count?": "number.integer >= 0" });

// Routes that exist only in this test, to reach each branch of the boundary.
const testRoutes = [
  defineRoute({ method: "POST", path: "/t/echo", tag: "t", summary: "echo", auth: "none", body: Echo, status: 201, handler: ({ body }) => ({ echoed: body }) }),
  defineRoute({ method: "GET", path: "/t/boom", tag: "t", summary: "throws", auth: "none", handler: () => { throw new Error("secret internals at /srv/app.ts:42"); } }),
  defineRoute({ method: "GET", path: "/t/conflict", tag: "t", summary: "409", auth: "none", handler: () => { throw new AppError("name_taken", "That name is taken"); } }),
  defineRoute({ method: "GET", path: "/t/limited", tag: "t", summary: "429", auth: "none", handler: () => { throw new AppError("rate_limited", "Slow down", { headers: { "retry-after": "7" } }); } }),
  // As drizzle wraps libSQL's error: the query (with its parameters) outside, SQLITE_FULL inside.
  defineRoute({ method: "GET", path: "/t/sqlite-full", tag: "t", summary: "507", auth: "none", handler: () => { throw new Error("Failed query: insert into t values (?)\nparams: vsk_secret", { cause: Object.assign(new Error("SQLITE_FULL: database or disk is full"), { code: "SQLITE_FULL" }) }); } }),
  defineRoute({ method: "GET", path: "/t/enospc", tag: "t", summary: "507", auth: "none", handler: () => { throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }); } }),
  defineRoute({ method: "GET", path: "/t/key", tag: "t", summary: "key", auth: "api_key", handler: () => ({}) }),
  // Background steps give way while a request is handled (shared/foreground.ts): the app counts it.
  defineRoute({ method: "GET", path: "/t/busy", tag: "t", summary: "busy", auth: "none", handler: async ({ services }) => { await Bun.sleep(1); return { busy: services.foreground.busy }; } }),
  defineRoute({ method: "DELETE", path: "/t/thing/:id", tag: "t", summary: "204", auth: "none", status: 204, handler: () => undefined }),
];

let testApp: TestApp;
let server: { stop(): Promise<void> };
let base: string;

beforeAll(async () => {
  testApp = await createTestApp();
  const app = buildApp(testApp.services, testRoutes);
  void app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${app.server!.port}`;
  server = { stop: async () => void (await app.stop(true)) };
});
afterAll(async () => {
  await server.stop();
  await testApp[Symbol.asyncDispose]();
});

const post = (path: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  fetch(base + path, { method: "POST", body, headers });

describe("happy", () => {
  test("a valid body reaches the handler and answers the route's status", async () => {
    const res = await post("/t/echo", JSON.stringify({ name: "ada", count: 2 }));
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ echoed: { name: "ada", count: 2 } });
  });

  test("every response carries an x-request-id, and a safe incoming one is echoed", async () => {
    const minted = await fetch(base + "/t/conflict");
    expect(minted.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await fetch(base + "/t/echo", { method: "POST", body: "{}", headers: { "x-request-id": "req-abc.1" } });
    expect(echoed.headers.get("x-request-id")).toBe("req-abc.1");
    const unsafe = await fetch(base + "/nowhere", { headers: { "x-request-id": "bad id with spaces" } });
    expect(unsafe.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });

  test("a request counts as in flight while its handler runs, and not after, whatever it answered", async () => {
    expect(await json(await fetch(base + "/t/busy"))).toEqual({ busy: true });
    expect((await fetch(base + "/t/boom")).status).toBe(500);
    expect((await fetch(base + "/t/conflict")).status).toBe(409);
    expect(testApp.services.foreground.busy).toBe(false);
    // One per process: the one the vector store's background work gives way to.
    expect(testApp.services.foreground).toBe(testApp.services.vectors.foreground);
  });

  test("204 answers no body", async () => {
    const res = await fetch(base + "/t/thing/abc", { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
  });
});

describe("errors", () => {
  test("malformed JSON → 400 validation_error", async () => {
    const res = await post("/t/echo", '{"name": ');
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe("validation_error");
    expect(body.error.message).toContain("malformed");
  });

  test("schema violations list each path and problem", async () => {
    const res = await post("/t/echo", JSON.stringify({ name: "", count: -1 }));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe("validation_error");
    const paths = body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(["count", "name"]);
  });

  test("a missing body on a route that needs one is a validation error, not a crash", async () => {
    const res = await fetch(base + "/t/echo", { method: "POST" });
    expect(res.status).toBe(400);
    expect((await json(res)).error.details[0].path).toBe("name");
  });

  test("JSON nested deeper than 32 levels → 400", async () => {
    const deep = "[".repeat(40) + "]".repeat(40);
    const res = await post("/t/echo", deep);
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain("deep");
  });

  test("a body over 1 MiB → 413 payload_too_large, declared or streamed", async () => {
    const big = JSON.stringify({ name: "x", pad: "a".repeat(1024 * 1024) });
    const declared = await post("/t/echo", big);
    expect(declared.status).toBe(413);
    expect((await json(declared)).error.code).toBe("payload_too_large");

    const chunk = new TextEncoder().encode("a".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const streamed = await fetch(base + "/t/echo", { method: "POST", body: stream, headers: { "content-type": "application/json" } });
    expect(streamed.status).toBe(413);
  });

  test("a body of exactly 1 MiB is accepted as far as size goes", async () => {
    const prefix = '{"name":"x","pad":"';
    const body = prefix + "a".repeat(1024 * 1024 - prefix.length - 2) + '"}';
    expect(body.length).toBe(1024 * 1024);
    const res = await post("/t/echo", body);
    expect(res.status).toBe(201);
  });

  test("unknown route → 404 with the error body", async () => {
    const res = await fetch(base + "/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: { code: "not_found", message: "No such route" } });
  });

  test("an unexpected error → 500 internal, with no stack or internals", async () => {
    const res = await fetch(base + "/t/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: "internal", message: "An unexpected error occurred" } });
    expect(text).not.toContain("/srv/app.ts");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("our own errors keep their status, code and headers", async () => {
    const conflict = await fetch(base + "/t/conflict");
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).error.code).toBe("name_taken");
    const limited = await fetch(base + "/t/limited");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
  });

  test.each(["/t/sqlite-full", "/t/enospc"])("a full disk (%s) → 507 storage_full, the query's parameters not in it", async (path) => {
    const res = await fetch(base + path);
    expect(res.status).toBe(507);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("storage_full");
    expect(text).not.toContain("vsk_secret");
  });

  test("a key route without credentials → 401 unauthorized", async () => {
    const missing = await fetch(base + "/t/key");
    expect(missing.status).toBe(401);
    expect((await json(missing)).error.code).toBe("unauthorized");
    const malformed = await fetch(base + "/t/key", { headers: { authorization: "Bearer vsk_nope" } });
    expect(malformed.status).toBe(401);
    const wrongScheme = await fetch(base + "/t/key", { headers: { authorization: "Basic abc" } });
    expect(wrongScheme.status).toBe(401);
  });
});
