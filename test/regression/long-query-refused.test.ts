// Regression: the query's `query` field had no maximum length, and for emb_a the whole text was
// counted and then encoded with cl100k_base on the event loop before any network call: a body of
// 1 MiB of 39-letter words held the loop 5-8 s (Cyrillic 8-12 s), and the query's 15 s deadline
// could not fire meanwhile. Any key, a read_only one included, stalled every tenant. The text is
// now capped at 32,768 characters (400 `validation_error` before anything else is done), and a
// text at the cap costs its first 8,191 tokens only (tokenizer.ts).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { QUERY_MAX_CHARS } from "../../src/domains/query/schemas.ts";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { json, readOnlyKey, type Bearer } from "../helpers/organizations.ts";
import { createWorld, enqueueFill, newVectorTable, taskDone, type World } from "../domains/sync/world.ts";

setDefaultTimeout(30_000);

let w: World;
let table: VectorTableRow;
let key: Bearer;
beforeAll(async () => {
  w = await createWorld({ rows: 20 });
  w.services.scheduler.start();
  table = await newVectorTable(w);
  await taskDone(w, (await enqueueFill(w, table)).id);
  key = await readOnlyKey(w.app, w.org.owner);
});
afterAll(() => w.dispose());

/** Random 39-letter words (the slowest text for a byte-pair merge short of a long run), about `chars` long. */
function words(chars: number, alphabet = "abcdefghijklmnopqrstuvwxyz"): string {
  let x = 7;
  const out: string[] = [];
  for (let n = 0; n < chars; n += 40) {
    let word = "";
    for (let i = 0; i < 39; i++) word += alphabet[(x = (x * 1103515245 + 12345) & 0x7fffffff) % alphabet.length];
    out.push(word);
  }
  return out.join(" ").slice(0, chars);
}

const query = (text: string) => w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: key, body: { query: text } });

/** `request` and /healthz sent right after it, each with how long it took from the moment both were sent. */
async function withHealth(request: () => Promise<Response>) {
  const started = performance.now();
  const timed = (res: Promise<Response>) => res.then((r) => ({ res: r, ms: performance.now() - started }));
  const [main, health] = await Promise.all([timed(request()), timed(w.app.request("GET", "/healthz"))]);
  return { main, health };
}

describe("errors", () => {
  test("a 1 MiB query is refused 400 within 50 ms by a read_only key, and /healthz answers meanwhile", async () => {
    expect((await query("warm up the route")).status).toBe(200);
    const text = words(1_000_000); // the body stays under the 1 MiB cap (413)
    const { main, health } = await withHealth(() => query(text));
    const body = await json(main.res);
    expect([main.res.status, body.error?.code]).toEqual([400, "validation_error"]);
    expect(body.error.details.map((d: { path: string }) => d.path)).toEqual(["query"]);
    expect(main.ms).toBeLessThan(50);
    expect(health.res.status).toBe(200);
    expect(health.ms).toBeLessThan(50);
  });

  test("one character past the cap is refused; Cyrillic counts by characters too", async () => {
    expect((await query("a".repeat(QUERY_MAX_CHARS + 1))).status).toBe(400);
    expect((await query("ж".repeat(QUERY_MAX_CHARS + 1))).status).toBe(400);
  });
});

describe("happy", () => {
  test("a query at the cap is embedded and answered, and /healthz answers meanwhile", async () => {
    for (const alphabet of ["abcdefghijklmnopqrstuvwxyz", "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"]) {
      const text = words(QUERY_MAX_CHARS, alphabet);
      const { main, health } = await withHealth(() => query(text));
      expect(main.res.status).toBe(200);
      expect((await json(main.res)).results.length).toBeGreaterThan(0);
      // The cut is counted on the loop (~10-30 ms for its 8,191 tokens); the bound is generous.
      expect(health.ms).toBeLessThan(250);
    }
  });
});
