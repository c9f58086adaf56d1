// A cdc table's change feed heals itself (issue 14, docs/day-two.md#lost-change-feed): a slot or
// publication dropped on the source, a source that drops every connection (as a restart does),
// a slot moved past what vecsync applied, and a source restored to an earlier point are each
// detected, the feed recreated, the table resynchronized by hashes once and streaming again —
// well within one sync interval (the reconcile pass is an hour away here), the table answering
// queries and never `error` meanwhile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../harness.ts";
import { feedName } from "../../../src/drivers/sources/postgres-cdc.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import { syncStatusOf } from "../../../src/domains/vector-tables/control.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, updateTableRow, type World } from "./world.ts";

let w: World;
let table: VectorTableRow;
let slot: string;
/** Every status the table showed while the faults ran: it must never be `error`. */
const seen = new Set<string>();
let watching: ReturnType<typeof setInterval>;

beforeAll(async () => {
  w = await createWorld({ rows: 50, env: { VECSYNC_SYNC_INTERVAL: "3600", VECSYNC_LOG_LEVEL: process.env.LOGLVL ?? "silent" } });
  w.services.scheduler.start();
  table = await newVectorTable(w, { syncMode: "cdc" });
  await taskDone(w, (await enqueueFill(w, table)).id);
  slot = feedName(table.id);
  await eventually(() => syncState(w.services).consumers.has(table.id), 5_000);
  watching = setInterval(async () => seen.add((await tableRow(w, table.id))?.syncStatus ?? "gone"), 20);
});
afterAll(async () => {
  clearInterval(watching);
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

const converged = (ms = 8_000) =>
  eventually(async () => JSON.stringify(sortedEntries(await storedSet(w.services, table))) === JSON.stringify(sortedEntries(await expectedSet(w.sql))), ms);

const slotActive = () => eventually(async () => (await w.sql`SELECT 1 FROM pg_replication_slots WHERE slot_name = ${slot} AND active`).length > 0, 8_000);

/** Ends the walsender and drops the slot, as an operator would (an active slot cannot be dropped). */
async function dropSlot(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await w.sql`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ${slot} AND active_pid IS NOT NULL`;
    try {
      const dropped = await w.sql`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ${slot}`;
      if (dropped.length > 0) return;
    } catch (err) {
      if ((err as { code?: string }).code !== "55006") throw err; // taken again meanwhile: once more
    }
    await Bun.sleep(5);
  }
  throw new Error("could not drop the slot");
}

const status = async () => syncStatusOf((await tableRow(w, table.id))!, new Date());

describe("a lost change feed heals within one sync interval", () => {
  test("slot dropped on the source: recreated, resynced, streaming again", async () => {
    await slotActive();
    await dropSlot();
    await w.sql`INSERT INTO docs VALUES (1001, 'after the slot was dropped', 'x', 'c', 1)`;
    await w.sql`UPDATE docs SET body = 'changed while the slot was gone' WHERE id = 2`;
    await converged();
    await slotActive();
    // Streaming again (not a pass): a change now arrives through the new slot.
    await w.sql`UPDATE docs SET body = 'through the new slot' WHERE id = 3`;
    await converged();
    const s = await status();
    expect(s.sync_status).toBe("synced");
    expect(s.last_error).toContain('the replication slot "vecsync_');
    expect(s.last_error).toContain("no longer exists on the source");
    expect(s.last_error).toContain("recreated the change feed and resynchronized by hashes");
  });

  test("publication dropped on the source: recreated with a new slot, resynced", async () => {
    await slotActive();
    await w.sql.unsafe(`DROP PUBLICATION "${slot}"`);
    await w.sql`UPDATE docs SET body = 'after the publication was dropped' WHERE id = 4`;
    await w.sql`DELETE FROM docs WHERE id = 5`;
    await converged();
    expect((await w.sql`SELECT 1 FROM pg_publication WHERE pubname = ${slot}`).length).toBe(1);
    await slotActive();
    await w.sql`UPDATE docs SET body = 'through the new publication' WHERE id = 6`;
    await converged();
    expect((await status()).last_error).toMatch(/publication.*recreated the change feed/);
  });

  test("the source drops every connection (a restart): the stream reconnects, nothing resynced", async () => {
    await slotActive();
    const inputs = w.fake.counters.inputs;
    await w.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
    await w.sql`UPDATE docs SET body = 'after the source restarted' WHERE id = 7`;
    await converged();
    await slotActive();
    expect(w.fake.counters.inputs - inputs).toBe(1); // one changed row, no resync
    // The interruption was noted and is cleared once the stream is open again.
    expect(await eventually(async () => (await status()).last_error === null)).toBe(true);
  });

  test("slot moved past what vecsync applied: detected and resynced", async () => {
    await updateTableRow(w, table.id, { syncStatus: "paused" });
    await eventually(() => !syncState(w.services).consumers.has(table.id), 5_000);
    await w.sql`UPDATE docs SET body = 'consumed by someone else' WHERE id = 8`;
    await w.sql`SELECT pg_replication_slot_advance(${slot}, pg_current_wal_lsn())`;
    await updateTableRow(w, table.id, { syncStatus: "synced" });
    await w.services.engine.resumed((await tableRow(w, table.id))!);
    await converged();
    expect((await status()).last_error).toMatch(/ahead of what vecsync applied.*recreated the change feed/);
  });

  test("source restored to an earlier point (vecsync applied past its WAL): detected and resynced", async () => {
    await updateTableRow(w, table.id, { syncStatus: "paused" });
    await eventually(() => !syncState(w.services).consumers.has(table.id), 5_000);
    await w.sql`UPDATE docs SET body = 'written after the restore' WHERE id = 9`;
    // What a restore looks like from here: vecsync's position is beyond anything the source wrote.
    await updateTableRow(w, table.id, { syncStatus: "synced", cdcCheckpoint: "FF/0" });
    await w.services.engine.resumed((await tableRow(w, table.id))!);
    await converged();
    await slotActive();
    expect((await status()).last_error).toMatch(/behind the position vecsync applied.*restored from a backup.*recreated/);
  });

  test("the table was never in error and answered throughout", () => {
    expect([...seen].filter((s) => s !== "synced" && s !== "paused")).toEqual([]);
  });
});
