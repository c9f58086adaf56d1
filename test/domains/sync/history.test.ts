// The engine records its passes (docs/vector-tables.md#sync-history): a backfill run, a batch pass, a
// re-backfill, a failing pass, and a change stream's minutes, each with the counts the engine
// computed and the tokens the provider billed (the fake provider counts them on its side).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { flushSyncHistory, stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { eventually } from "../../harness.ts";
import { json } from "../../helpers/organizations.ts";
import { COLUMNS, createWorld, enqueueFill, expectedSet, newVectorTable, storedTexts, tableRow, taskDone, textsOf, type World } from "./world.ts";

const ROWS = 120;
let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS });
  w.services.scheduler.start();
  table = await newVectorTable(w);
});
afterAll(() => w.dispose());

type Entry = { id: string; kind: string; status: string; started_at: string; finished_at: string | null; rows_scanned: number; rows_embedded: number; rows_metadata_only: number; rows_deleted: number; rows_unchanged: number; tokens: number; error: string | null };

async function history(tableId: string): Promise<Entry[]> {
  const res = await w.app.request("GET", `/v1/vector-tables/${tableId}/sync/history?limit=100`, { headers: w.org.owner.key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

/** The newest entry once it has ended. */
const ended = (tableId: string, count: number) =>
  eventually(async () => {
    const entries = await history(tableId);
    return entries.length === count && entries[0]!.status !== "running" && entries;
  }, 20_000);

const tokens = () => w.fake.counters.tokens;

describe("happy", () => {
  test("a backfill: one `backfill` entry, completed, every row read and embedded, the tokens the provider counted", async () => {
    const before = tokens();
    const task = await enqueueFill(w, table);
    await taskDone(w, task.id);
    const [entry, ...rest] = await ended(table.id, 1);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ kind: "backfill", status: "completed", rows_scanned: ROWS, rows_embedded: ROWS, rows_metadata_only: 0, rows_deleted: 0, rows_unchanged: 0, error: null });
    expect(entry!.tokens).toBeGreaterThan(0);
    expect(entry!.tokens).toBe(tokens() - before);
    expect(entry!.finished_at! >= entry!.started_at).toBe(true);
  });

  test("a batch pass after k text updates, m metadata-only updates and d deletes: k embedded, m metadata only, d deleted", async () => {
    await w.sql`UPDATE docs SET body = 'rewritten ' || id WHERE id IN (1, 2, 3)`;
    await w.sql`UPDATE docs SET category = 'moved', price = 0.5 WHERE id IN (10, 11, 12, 13)`;
    await w.sql`DELETE FROM docs WHERE id IN (20, 21)`;
    const before = tokens();
    await runBatchPass(w.services, table.id);
    const [entry] = await ended(table.id, 2);
    expect(entry).toMatchObject({ kind: "batch", status: "completed", rows_scanned: ROWS - 2, rows_embedded: 3, rows_metadata_only: 4, rows_deleted: 2, rows_unchanged: ROWS - 2 - 3 - 4, error: null });
    expect(entry!.tokens).toBe(tokens() - before);
    expect(entry!.tokens).toBeGreaterThan(0);
  });

  test("a pass with nothing to do costs nothing and says so", async () => {
    await runBatchPass(w.services, table.id);
    const [entry] = await ended(table.id, 3);
    expect(entry).toMatchObject({ kind: "batch", status: "completed", rows_scanned: ROWS - 2, rows_embedded: 0, rows_metadata_only: 0, rows_deleted: 0, rows_unchanged: ROWS - 2, tokens: 0 });
  });

  test("a re-backfill that only drops a metadata column copies every vector: `rebackfill`, all rows written without embedding", async () => {
    const before = tokens();
    const res = await w.app.request("PUT", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key, body: { columns: COLUMNS.filter((c) => c.name !== "price") } });
    expect(res.status).toBe(200);
    await eventually(async () => (await tableRow(w, table.id))!.syncStatus === "synced", 20_000);
    const [entry] = await ended(table.id, 4);
    expect(entry).toMatchObject({ kind: "rebackfill", status: "completed", rows_scanned: ROWS - 2, rows_embedded: 0, rows_metadata_only: ROWS - 2, tokens: 0 });
    expect(tokens()).toBe(before);
  });
});

describe("errors", () => {
  test("a pass the provider refuses: a `failed` entry with the provider's words; the next pass completes", async () => {
    const provider = `/v1/embedding-providers/${w.providerId}`;
    expect((await w.app.request("PUT", provider, { headers: w.org.owner.key, body: { api_key: "a-wrong-key-0123456789" } })).status).toBe(200);
    await w.sql`UPDATE docs SET title = 'refused ' || id WHERE id IN (30, 31)`;
    await expect(runBatchPass(w.services, table.id)).rejects.toThrow("401");
    const [failed] = await ended(table.id, 5);
    expect(failed).toMatchObject({ kind: "batch", status: "failed", rows_embedded: 0 });
    expect(failed!.error).toContain("401");
    expect(failed!.error).not.toContain("a-wrong-key-0123456789");
    expect(failed!.finished_at).not.toBeNull();

    expect((await w.app.request("PUT", provider, { headers: w.org.owner.key, body: { api_key: w.fake.apiKey } })).status).toBe(200);
    await runBatchPass(w.services, table.id);
    const [ok] = await ended(table.id, 6);
    expect(ok).toMatchObject({ kind: "batch", status: "completed", rows_embedded: 2, error: null });
  });
});

describe("cdc", () => {
  test("the stream's changes are one `cdc` entry per minute; a reconciling pass is `reconcile`", async () => {
    const cdc = await newVectorTable(w, { syncMode: "cdc" });
    try {
      await taskDone(w, (await enqueueFill(w, cdc)).id);
      await eventually(() => syncState(w.services).consumers.has(cdc.id), 5_000);
      const before = tokens();
      await w.sql`INSERT INTO docs VALUES (500, 'streamed', 'row', 'cat1', 2)`;
      await w.sql`UPDATE docs SET body = 'streamed update' WHERE id = 40`;
      await w.sql`UPDATE docs SET category = 'meta only' WHERE id = 41`;
      await w.sql`DELETE FROM docs WHERE id = 42`;
      const expected = textsOf(await expectedSet(w.sql));
      await eventually(async () => JSON.stringify([...(await storedTexts(w.services, cdc)).entries()].sort()) === JSON.stringify([...expected.entries()].sort()), 10_000);
      await eventually(async () => (await tableRow(w, cdc.id))!.rowsPending === 0, 5_000);

      // Written when the minute is over, or (here) at shutdown.
      await flushSyncHistory(w.services);
      const minutes = (await history(cdc.id)).filter((e) => e.kind === "cdc");
      expect(minutes.length).toBeGreaterThanOrEqual(1);
      const backfill = (await history(cdc.id)).at(-1)!;
      expect(backfill).toMatchObject({ kind: "backfill", status: "completed" });
      expect(minutes.every((m) => m.status === "completed" && m.started_at >= backfill.finished_at! && m.finished_at! >= m.started_at)).toBe(true);
      const sum = (k: keyof Entry) => minutes.reduce((n, m) => n + (m[k] as number), 0);
      expect({ embedded: sum("rows_embedded"), metadata: sum("rows_metadata_only"), deleted: sum("rows_deleted") }).toEqual({ embedded: 2, metadata: 1, deleted: 1 });
      expect(sum("tokens")).toBe(tokens() - before);
      expect(sum("tokens")).toBeGreaterThan(0);

      await runBatchPass(w.services, cdc.id);
      const [reconcile] = await history(cdc.id);
      expect(reconcile).toMatchObject({ kind: "reconcile", status: "completed", rows_embedded: 0, rows_deleted: 0 });
    } finally {
      await stopSyncFor(w.services, (await tableRow(w, cdc.id))!);
    }
  });
});
