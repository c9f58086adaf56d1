// Reconciliation of cdc tables (docs/architecture.md#cdc): the sync tick leaves a cdc table with a
// healthy stream alone until its reconcile interval has passed (VECSYNC_RECONCILE_INTERVAL, read
// on the service clock, moved forward here by hand), while batch tables keep their pass every
// sync interval; and the rows the stream writes carry their real hashes, so a reconciling pass
// finds them unchanged. Source reads are counted by Postgres itself (pg_stat_user_tables).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../harness.ts";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, type World } from "./world.ts";

const ROWS = 2000;
const HOUR_MS = 3600_000;
/** Real time (the scheduler's ticks run on it) plus what the test moved it forward by. */
const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };

let w: World;
let cdc: VectorTableRow;
let batch: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS, env: { VECSYNC_SYNC_INTERVAL: "1" }, clock });
  await w.sql`ALTER TABLE docs ADD COLUMN note text`; // a column no vector table syncs
  await w.sql`CREATE TABLE other (LIKE docs INCLUDING ALL)`;
  await w.sql`INSERT INTO other SELECT g, 'other ' || g, 'b', 'c', g FROM generate_series(1, 20) g`; // not from docs: its reads are counted
  w.services.scheduler.start();
  cdc = await newVectorTable(w, { syncMode: "cdc" });
  batch = await newVectorTable(w, { sourceTable: "other" });
  await taskDone(w, (await enqueueFill(w, cdc)).id);
  await taskDone(w, (await enqueueFill(w, batch)).id);
  await eventually(() => syncState(w.services).consumers.has(cdc.id), 5_000);
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, cdc.id))!);
  await w.dispose();
});

/** Rows of `docs` Postgres has read for anyone (sequential and index scans). */
async function docsReads(): Promise<number> {
  const [row] = await w.sql`SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE relname = 'docs'`;
  return Number(row!.n);
}

/** Waits for `n` more passes of the batch table: at least `n` sync ticks went by. */
async function batchPasses(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const before = (await tableRow(w, batch.id))!.lastSyncAt;
    await eventually(async () => (await tableRow(w, batch.id))!.lastSyncAt !== before, 10_000);
  }
}

const reconciledAt = async () => (await tableRow(w, cdc.id))!.lastSyncStartedAt;

describe("happy", () => {
  test("a cdc table with a healthy stream is not read every sync interval; a reconcile pass runs once due, once", async () => {
    await batchPasses(1);
    const afterFill = await reconciledAt();
    expect(afterFill).not.toBeNull(); // the backfill counts as the last reconciliation
    const before = await docsReads();
    await batchPasses(3);
    expect((await docsReads()) - before).toBeLessThan(ROWS); // no full read in three ticks
    expect(await reconciledAt()).toBe(afterFill);

    clock.offsetMs += HOUR_MS; // the default VECSYNC_RECONCILE_INTERVAL has passed
    const due = await docsReads();
    await eventually(async () => (await reconciledAt()) !== afterFill, 10_000);
    await eventually(async () => (await docsReads()) - due >= ROWS, 15_000); // Postgres publishes a backend's counts when it ends
    const reconciled = await reconciledAt();
    expect(Date.parse(reconciled!)).toBeGreaterThanOrEqual(Date.parse(afterFill!) + HOUR_MS);
    await batchPasses(3);
    expect(await reconciledAt()).toBe(reconciled);
  });

  test("rows the stream wrote (insert, text update, metadata-only, no synced column) are unchanged for the next reconcile pass", async () => {
    await w.sql`UPDATE docs SET note = 'touches no synced column' WHERE id = 5`;
    await w.sql`INSERT INTO docs (id, title, body, category, price) VALUES (5001, 'streamed', 'row', 'cat1', 2)`;
    await w.sql`UPDATE docs SET body = 'streamed update' WHERE id = 3`;
    await w.sql`UPDATE docs SET category = 'meta only' WHERE id = 4`;
    await w.sql`DELETE FROM docs WHERE id = 6`;
    // Batches apply in commit order: once the last change shows, every one before it was applied.
    await eventually(async () => JSON.stringify(sortedEntries(await storedSet(w.services, cdc))) === JSON.stringify(sortedEntries(await expectedSet(w.sql))), 10_000);
    const inputs = w.fake.counters.inputs;
    const pass = (await runBatchPass(w.services, cdc.id))!;
    expect(pass.counts).toMatchObject({ embedded: 0, reused: 0, metadata: 0, deleted: 0, unchanged: ROWS });
    expect(w.fake.counters.inputs).toBe(inputs);
  });
});
