// A reconciling pass and the change stream write the same live generation at once. The pass reads
// its hash pages first and fetches, embeds and writes later; a slow provider (latencyMs) widens
// that window to seconds. A row the stream inserts or changes meanwhile must survive the pass:
// not deleted as "vanished" (the pass read past its key before it existed), not overwritten with
// the values the pass fetched before the change.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../harness.ts";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import type { Metadata } from "../../../src/drivers/store-api/index.ts";
import { createWorld, expectedSet, sortedEntries, storedSet, streamingTable, tableRow, type World } from "./world.ts";

const LATENCY_MS = 1500;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 1200 });
  table = await streamingTable(w);
  await eventually(() => syncState(w.services).consumers.has(table.id), 5_000);
});
afterAll(async () => {
  w.fake.set({ latencyMs: 0 });
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

/**
 * Waits until the provider has received `n` more requests than `from` (counted on arrival: the
 * recorded requests list them only once answered). Each flush below is one request.
 */
const received = (from: number, n: number) => eventually(() => w.fake.counters.received >= from + n, 20_000);

describe("races", () => {
  test("a row the stream inserts or changes while a reconcile pass runs is neither deleted nor overwritten by it", async () => {
    const collection = table.vectorstoreCollection;
    // What the stream "missed", for the pass to repair in two flushes: rows 1–512 (the first
    // flush), rows 1001–1100 and the metadata hash of row 1150 (the last flush).
    await w.services.vectors.delete(collection, range(1, 512));
    await w.services.vectors.delete(collection, range(1001, 1100));
    const { metadata } = (await storedSet(w.services, table)).get("1150")!;
    await w.services.vectors.updateMetadata(collection, [{ pk: "1150", metaHash: "stale", metadata: metadata as Metadata }]);
    w.fake.set({ latencyMs: LATENCY_MS });

    const from = w.fake.counters.received;
    const pass = runBatchPass(w.services, table.id);
    // Request 1, the pass's first flush, embeds: the pass has long read past key 0. The stream
    // inserts it now (request 2, the stream embedding row 0, comes before or after that flush's
    // write, but before the last flush: it is queued first).
    await received(from, 1);
    await w.sql`INSERT INTO docs VALUES (0, 'inserted', 'while the pass runs', 'cat0', 1)`;
    // Request 3, the pass's last flush, embeds: it fetched row 1150 before. The stream changes it now.
    await received(from, 3);
    await w.sql`UPDATE docs SET category = 'changed while the pass runs' WHERE id = 1150`;
    const result = (await pass)!;
    expect(result.counts.embedded).toBeGreaterThanOrEqual(612);

    w.fake.set({ latencyMs: 0 });
    const expected = JSON.stringify(sortedEntries(await expectedSet(w.sql)));
    await eventually(async () => JSON.stringify(sortedEntries(await storedSet(w.services, table))) === expected, 10_000).catch(() => {});
    const now = await storedSet(w.services, table);
    expect({ inserted: now.get("0")?.text, changed: now.get("1150")?.metadata.category }).toEqual({ inserted: "Title: inserted\nwhile the pass runs", changed: "changed while the pass runs" });
    expect(JSON.stringify(sortedEntries(now))).toBe(expected);
  });
});
