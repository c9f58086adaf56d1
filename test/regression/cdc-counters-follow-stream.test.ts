// Regression (issue 14, fault 3): on a cdc table, TRUNCATE and a re-insert of 1,493 rows left
// `total_rows`/`synced_rows` at 3000/3000 until the reconciling pass (an hour away by default):
// the consumer applied the stream but never touched the counters. Now they are computed from the
// store after every applied batch (sync/counters.ts), so they follow the stream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { eventually } from "../harness.ts";
import { createWorld, streamingTable, tableRow, type World } from "../domains/sync/world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  // The world's VECSYNC_SYNC_INTERVAL is an hour: no reconciling pass runs during the test.
  w = await createWorld({ rows: 3000 });
  table = await streamingTable(w, 60_000);
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

/** Waits until the table shows `n` rows, total and synced, and nothing pending. */
const counted = (n: number) =>
  eventually(async () => {
    const row = (await tableRow(w, table.id))!;
    return row.totalRows === n && row.syncedRows === n && row.rowsPending === 0 && row;
  }, 15_000);

describe("happy", () => {
  test("TRUNCATE and a re-insert of 1,493 rows: 1493/1493 as soon as the stream applied it", async () => {
    expect(await tableRow(w, table.id)).toMatchObject({ totalRows: 3000, syncedRows: 3000 });
    await w.sql`TRUNCATE docs`;
    await w.sql`INSERT INTO docs SELECT g, 'again ' || g, 'b', 'c', g FROM generate_series(1, 1493) g`;
    await counted(1493);
    expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(1493);
  });

  test("a plain insert and a delete move both by one; a row with empty text counts as synced", async () => {
    await w.sql`INSERT INTO docs VALUES (5000, 'one more', 'row', 'c', 1)`;
    await counted(1494);
    await w.sql`INSERT INTO docs VALUES (5001, NULL, NULL, 'c', 1)`; // empty text: no vector, still synced
    await counted(1495);
    expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(1494);
    await w.sql`DELETE FROM docs WHERE id = 5000`;
    await counted(1494);
    await w.sql`DELETE FROM docs WHERE id = 5001`;
    await counted(1493);
  });
});
