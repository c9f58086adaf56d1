import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../harness.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { createWorld, expectedSet, sortedEntries, storedSet, streamingTable, tableRow, updateTableRow, type World } from "./world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 200 });
  table = await streamingTable(w);
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

/** The collection equals the source within the bound (changes are applied continuously). */
const converges = (ms = 5_000) =>
  eventually(async () => JSON.stringify(sortedEntries(await storedSet(w.services, table))) === JSON.stringify(sortedEntries(await expectedSet(w.sql))), ms);

describe("happy", () => {
  test("the backfill prepared the feed and a consumer runs", async () => {
    const row = (await tableRow(w, table.id))!;
    expect(row.syncStatus).toBe("synced");
    expect(row.cdcCheckpoint).not.toBeNull();
    await eventually(() => syncState(w.services).consumers.has(table.id), 3_000);
  });

  test("insert, update, delete are reflected within a bounded time, checkpoint and staleness kept", async () => {
    const before = (await tableRow(w, table.id))!.cdcCheckpoint;
    const inputs = w.fake.counters.inputs;
    await w.sql`INSERT INTO docs VALUES (201, 'streamed', 'row', 'cat1', 2)`;
    await w.sql`UPDATE docs SET body = 'streamed update' WHERE id = 3`;
    await w.sql`UPDATE docs SET category = 'meta only' WHERE id = 4`;
    await w.sql`DELETE FROM docs WHERE id = 5`;
    const started = Date.now();
    await converges();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(5_000);
    expect(w.fake.counters.inputs - inputs).toBe(2); // the metadata-only change reused its vector
    const row = await eventually(async () => {
      const r = (await tableRow(w, table.id))!;
      return r.cdcCheckpoint !== before && r;
    });
    expect(row.oldestPendingChangeAt).toBeNull();
  });

  test("TRUNCATE empties the collection", async () => {
    await w.sql`TRUNCATE docs`;
    await converges();
    expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(0);
    await w.sql`INSERT INTO docs SELECT g, 'again ' || g, 'b', 'c', g FROM generate_series(1, 20) g`;
    await converges();
  });

  test("the reconciling pass finds nothing to repair and stores the real hashes", async () => {
    const { runBatchPass } = await import("../../../src/domains/sync/batch.ts");
    const inputs = w.fake.counters.inputs;
    await runBatchPass(w.services, table.id);
    expect(w.fake.counters.inputs - inputs).toBe(0);
    const again = (await runBatchPass(w.services, table.id))!;
    expect(again.counts).toMatchObject({ embedded: 0, reused: 0, metadata: 0, deleted: 0, unchanged: 20 });
  });

  test("pause stops the consumer; resume restarts it and catches up", async () => {
    await updateTableRow(w, table.id, { syncStatus: "paused" });
    await eventually(() => !syncState(w.services).consumers.has(table.id), 3_000);
    await w.sql`UPDATE docs SET title = 'during pause' WHERE id = 1`;
    await Bun.sleep(300);
    expect((await storedSet(w.services, table)).get("1")!.text).toStartWith("Title: again 1");
    await updateTableRow(w, table.id, { syncStatus: "synced" });
    await converges();
  });
});
