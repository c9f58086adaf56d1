// Regression: source rows had no size cap. A 5 MiB row was fetched whole, rendered, counted and
// cut by the tokenizer on the event loop (seconds for emb_a: every query waited behind it), its
// whole text stored, and a 256-row page of such rows held gigabytes. Now a row whose embedded
// text passes 256 KiB fails on its own: the Postgres source does not even send its text, the row
// is listed by GET /v1/vector-tables/{id}/errors and left out, and every other row syncs.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { runBatchPass } from "../../src/domains/sync/batch.ts";
import { ROW_TEXT_MAX_BYTES } from "../../src/domains/sync/row-errors.ts";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { tokenCounterFor } from "../../src/drivers/embeddings/tokenizer.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, type World } from "../domains/sync/world.ts";

setDefaultTimeout(60_000);

let w: World;
let table: VectorTableRow;

/** Random 39-letter words, the slowest text to count short of a long run, about `bytes` long. */
function words(bytes: number, seed: number): string {
  let x = seed;
  const out: string[] = [];
  for (let n = 0; n < bytes; n += 40) {
    let word = "";
    for (let i = 0; i < 39; i++) word += String.fromCharCode(97 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 26));
    out.push(word);
  }
  return out.join(" ");
}

const HUGE = words(5 * 1024 * 1024, 7);
const LARGE = words(200 * 1024, 11); // under the cap: embedded, cut to the model's input

beforeAll(async () => {
  w = await createWorld({ rows: 60 });
  await w.sql`UPDATE docs SET body = ${HUGE} WHERE id = 7`;
  await w.sql`UPDATE docs SET body = ${LARGE} WHERE id = 8`;
  await tokenCounterFor("emb_a"); // its one-time load (~200 ms) is not what is measured
  w.services.scheduler.start();
  table = await newVectorTable(w);
});
afterAll(() => w.dispose());

const rowErrors = async () => {
  const res = await w.app.request("GET", `/v1/vector-tables/${table.id}/errors`, { headers: w.org.owner.key });
  expect(res.status).toBe(200);
  return (await json(res)).data as { pk: string; error: string; attempts: number; first_seen_at: string; last_seen_at: string }[];
};

/** Runs `fn` with a 5 ms timer ticking, and answers the longest the event loop went without turning. */
async function longestStall(fn: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await fn();
  } finally {
    clearInterval(probe);
  }
  return Math.max(longest, performance.now() - last);
}

describe("happy", () => {
  test("a 5 MiB row fails alone without holding the event loop; every other row is embedded", async () => {
    const stall = await longestStall(async () => taskDone(w, (await enqueueFill(w, table)).id));
    // A page's store write is ~25 ms; counting the 5 MiB text on the loop held it for seconds. The
    // bound sits between the two, above what a loaded machine's scheduling alone adds (260 ms seen
    // with four processes on two cores).
    expect(stall).toBeLessThan(750);
    const row = (await tableRow(w, table.id))!;
    expect([row.syncStatus, row.totalRows, row.syncedRows]).toEqual(["synced", 60, 59]);

    const [failed, ...more] = await rowErrors();
    expect(more).toEqual([]);
    expect(failed).toMatchObject({ pk: "7", attempts: 1 });
    // Measured by the source, which kept the text: the title's 7 bytes and the body's.
    expect(failed!.error).toBe(`the row's text is over the limit of 262,144 bytes (256 KiB): its text columns hold ${(7 + Buffer.byteLength(HUGE)).toLocaleString("en-US")} bytes; it is not embedded until it is shorter`);
    expect(failed!.first_seen_at).toBe(failed!.last_seen_at);

    const expected = await expectedSet(w.sql);
    expected.delete("7");
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(expected));
    expect(Buffer.byteLength(expected.get("8")!.text)).toBeGreaterThan(200 * 1024); // stored whole, embedded cut
    // Nothing over the cap went to the provider.
    for (const r of w.fake.requests) for (const t of r.decoded?.texts ?? []) expect(Buffer.byteLength(t)).toBeLessThanOrEqual(ROW_TEXT_MAX_BYTES);
  });

  test("a pass skips the failed row while its text holds, tries it again when it changes, and embeds it once it fits", async () => {
    const requests = w.fake.requests.length;
    await runBatchPass(w.services, table.id);
    expect(w.fake.requests.length).toBe(requests);
    const [first] = await rowErrors();
    expect(first).toMatchObject({ pk: "7", attempts: 1 });

    await w.sql`UPDATE docs SET body = ${words(ROW_TEXT_MAX_BYTES + 10, 3)} WHERE id = 7`;
    await runBatchPass(w.services, table.id);
    const [again] = await rowErrors();
    expect(again).toMatchObject({ pk: "7", attempts: 2, first_seen_at: first!.first_seen_at });
    expect(again!.error).toContain("over the limit");

    await w.sql`UPDATE docs SET body = 'short again' WHERE id = 7`;
    await runBatchPass(w.services, table.id);
    expect(await rowErrors()).toEqual([]);
    expect((await storedSet(w.services, table)).get("7")?.text).toBe("Title: title 7\nshort again");
    expect((await tableRow(w, table.id))!.syncedRows).toBe(60);
  });

  test("the cap is on the text as embedded: prefixes and separators count, exactly at the cap is fine", async () => {
    // The text is "Title: title <id>\n" + body; the source sees only the columns' bytes, under the cap.
    const body = (id: number, over: number) => "x".repeat(ROW_TEXT_MAX_BYTES - Buffer.byteLength(`Title: title ${id}\n`) + over);
    await w.sql`UPDATE docs SET body = ${body(9, 1)} WHERE id = 9`;
    await w.sql`UPDATE docs SET body = ${body(10, 0)} WHERE id = 10`;
    await runBatchPass(w.services, table.id);
    const failed = await rowErrors();
    expect(failed.map((r) => [r.pk, r.error])).toEqual([["9", `the row's text is over the limit of 262,144 bytes (256 KiB): it is 262,145 bytes; it is not embedded until it is shorter`]]);
    const stored = await storedSet(w.services, table);
    expect(stored.has("9")).toBe(false); // its earlier vector is gone with its earlier text
    expect(Buffer.byteLength(stored.get("10")!.text)).toBe(ROW_TEXT_MAX_BYTES);
  });
});
