// GET /metrics credentials (docs/operability.md#metrics): open unless VECSYNC_METRICS_TOKEN is set,
// then `Authorization: Bearer <token>` or 401 with the error body. Two services in one process
// keep their own registries. Over a real socket.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listen, type RunningServer } from "../../../src/server.ts";
import { createTestApp, eventually, type TestApp } from "../../harness.ts";
import { parseExposition, total } from "./world.ts";

const TOKEN = "metrics-token-0123456789abcdef";

let open: TestApp, gated: TestApp;
let openServer: RunningServer, gatedServer: RunningServer;

beforeAll(async () => {
  open = await createTestApp();
  gated = await createTestApp({ env: { VECSYNC_METRICS_TOKEN: TOKEN } });
  openServer = listen(open.services, "127.0.0.1", 0);
  gatedServer = listen(gated.services, "127.0.0.1", 0);
});
afterAll(async () => {
  await openServer.stop();
  await gatedServer.stop();
  await open[Symbol.asyncDispose]();
  await gated[Symbol.asyncDispose]();
});

const metricsOf = (server: RunningServer, headers: Record<string, string> = {}) => fetch(`${server.url}/metrics`, { headers });

describe("happy", () => {
  test("without VECSYNC_METRICS_TOKEN the exposition needs no credential", async () => {
    const res = await metricsOf(openServer);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    expect(await res.text()).toContain("# TYPE vecsync_tasks gauge");
  });

  test("with the token set, the right bearer token is let in", async () => {
    const res = await metricsOf(gatedServer, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("# TYPE vecsync_http_request_duration_seconds histogram");
  });

  test("two services in one process count into their own registries", async () => {
    const route = { method: "GET", route: "/healthz", status: "200" };
    const count = async (server: RunningServer, headers: Record<string, string> = {}) =>
      total(parseExposition(await (await metricsOf(server, headers)).text()), "vecsync_http_request_duration_seconds_count", route);
    const gatedBefore = await count(gatedServer, { authorization: `Bearer ${TOKEN}` });
    const openBefore = await count(openServer);
    for (let i = 0; i < 3; i++) expect((await fetch(`${openServer.url}/healthz`)).status).toBe(200);
    await eventually(async () => (await count(openServer)) === openBefore + 3);
    expect(await count(gatedServer, { authorization: `Bearer ${TOKEN}` })).toBe(gatedBefore);
  });
});

describe("errors", () => {
  test.each([
    ["no Authorization header", {}],
    ["a wrong token", { authorization: "Bearer not-the-metrics-token" }],
    ["the token as a prefix", { authorization: `Bearer ${TOKEN}x` }],
    ["another scheme", { authorization: `Basic ${btoa(`user:${TOKEN}`)}` }],
  ])("%s → 401 unauthorized with the error body", async (_, headers: Record<string, string>) => {
    const res = await metricsOf(gatedServer, headers);
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).not.toContain(TOKEN);
  });
});
