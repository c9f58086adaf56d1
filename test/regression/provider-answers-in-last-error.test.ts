// A provider's error page went into a backfill's last_error (300 characters of any non-2xx body),
// and a redirect was followed with the key and the texts: a base_url pointing at an internal
// service could read its pages back through the task. Now a failed answer gives its status and
// at most 200 characters of its JSON error message, nothing of a page that is not JSON, and a
// redirect fails the task for good without a request to its target (docs/api.md#embedding-providers).
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tasks } from "../../src/scheduler/tables.ts";
import { eventually } from "../harness.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../fakes/embeddings/scripted.ts";
import { createWorld, enqueueFill, newVectorTable, tableRow, type World } from "../domains/sync/world.ts";

let w: World;
let upstream: ScriptedUpstream | null = null;
beforeAll(async () => {
  w = await createWorld({ rows: 20 });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());
afterEach(async () => {
  await upstream?.stop();
  upstream = null;
});

/** Points the world's provider at `base`, runs a backfill, and answers the failed task's last_error. */
async function failedBackfill(base: string): Promise<string> {
  const res = await w.app.request("PUT", `/v1/embedding-providers/${w.providerId}`, { headers: w.org.owner.key, body: { base_url: base } });
  expect(res.status).toBe(200);
  const table = await newVectorTable(w);
  const task = await enqueueFill(w, table);
  const failed = await eventually(async () => {
    const [row] = await w.services.database.db.select().from(tasks).where(eq(tasks.id, task.id));
    return row?.status === "failed" && row;
  }, 20_000);
  expect(failed.attempts).toBe(1); // failed for good at once: neither answer is worth a retry
  expect((await tableRow(w, table.id))!.lastError).toBe(failed.lastError);
  return failed.lastError!;
}

test("a page that is not JSON puts only its status and size into last_error", async () => {
  const page = `<html><title>Jenkins</title><pre>AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG</pre>${"<p>build log</p>".repeat(200)}</html>`;
  upstream = startScriptedUpstream(() => new Response(page, { status: 400, headers: { "content-type": "text/html" } }));
  const lastError = await failedBackfill(upstream.url);
  expect(lastError).toContain(`400: (non-JSON answer, ${page.length} bytes)`);
  for (const secret of ["Jenkins", "AWS_SECRET", "wJalrXUtnFEMI", "build log"]) expect(lastError).not.toContain(secret);
});

test("a redirect fails the backfill for good, and its target gets nothing", async () => {
  const before = w.fake.requests.length;
  upstream = startScriptedUpstream(() => new Response(null, { status: 308, headers: { location: `${w.fake.url}/embeddings` } }));
  const lastError = await failedBackfill(upstream.url);
  expect(lastError).toContain("308");
  expect(lastError).toContain("redirect");
  expect(upstream.requests).toHaveLength(1);
  expect(w.fake.requests.length).toBe(before);
});
