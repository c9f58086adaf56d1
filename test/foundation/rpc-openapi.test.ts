// tRPC through the typed client over HTTP, and the OpenAPI document and docs page.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { TRPCClientError } from "@trpc/client";
import { createVecsyncClient } from "../../rpc/client.ts";
import { startProcess, type RunningProcess } from "../harness.ts";
import { json } from "../helpers/http.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let svc: RunningProcess;
beforeAll(async () => {
  svc = await startProcess();
});
afterAll(async () => {
  await svc[Symbol.asyncDispose]();
});

describe("tRPC", () => {
  test("the typed client calls a procedure over HTTP", async () => {
    const client = createVecsyncClient({ url: svc.url });
    expect(await client.health.query()).toEqual({ status: "ok" });
  });

  test("an unknown procedure is a 404 carrying our error code", async () => {
    const res = await fetch(`${svc.url}/trpc/nope`);
    expect(res.status).toBe(404);
    expect((await json(res)).error.data.vecsync.code).toBe("not_found");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("a client error surfaces as TRPCClientError with data", async () => {
    const client = createVecsyncClient({ url: svc.url }) as unknown as { nope: { query(): Promise<unknown> } };
    const err = await client.nope.query().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
  });

  test("tRPC bodies over 1 MiB → 413", async () => {
    const res = await fetch(`${svc.url}/trpc/health`, { method: "POST", body: "x".repeat(1024 * 1024 + 1), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(413);
    expect((await json(res)).error.code).toBe("payload_too_large");
  });
});

describe("OpenAPI and docs", () => {
  test("GET /v1/openapi.json is an OpenAPI 3.1 document listing the routes", async () => {
    const res = await fetch(`${svc.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/v1/vector-tables/{vector_table_id}/query");
    expect(doc.paths["/v1/environments/{environment_id}"].get.responses["200"].content["application/json"].schema.properties.name).toBeDefined();
    expect(doc.components.schemas.Error.required).toEqual(["error"]);
    // The health checks are probes, not API operations (src/http/routes.ts); the description names them.
    expect(Object.keys(doc.paths)).not.toContain("/healthz");
    expect(doc.info.description).toContain("GET /healthz");
  });

  test("GET /docs serves the reference page and its script from the package, no CDN", async () => {
    const page = await fetch(`${svc.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-url="/v1/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${svc.url}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });
});
