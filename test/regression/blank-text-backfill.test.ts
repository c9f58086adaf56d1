// Regression: a row whose rendered text was only blanks (embedding columns '' or spaces) went to
// the provider, which refuses blank inputs as a non-retryable error: the whole backfill failed for
// good and the table turned `error` (found while writing docs/vector-tables.md). Blank text is now
// empty text: the row is stored like one whose embedding columns are null, and everything else is
// embedded and findable.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, type World } from "../domains/sync/world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 12 });
  // `title` has a name prefix, so only a null title with a blank body renders blank.
  await w.sql`UPDATE docs SET title = NULL, body = '   ' WHERE id = 3`;
  await w.sql`UPDATE docs SET title = NULL, body = ${"\t\n "} WHERE id = 5`;
  await w.sql`UPDATE docs SET title = NULL, body = '' WHERE id = 8`;
  w.services.scheduler.start();
  table = await newVectorTable(w);
});
afterAll(() => w.dispose());

describe("happy", () => {
  test("a backfill over rows with blank text completes, leaves those rows out and stores every other row", async () => {
    const task = await enqueueFill(w, table);
    await taskDone(w, task.id);
    const row = (await tableRow(w, table.id))!;
    expect(row.syncStatus).toBe("synced");
    expect(row.lastError).toBeNull();
    expect(row.syncedRows).toBe(12);
    const stored = await storedSet(w.services, table);
    expect([...stored.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(["1", "2", "4", "6", "7", "9", "10", "11", "12"]);
    expect(sortedEntries(stored)).toEqual(sortedEntries(await expectedSet(w.sql)));
  });
});
