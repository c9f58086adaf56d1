// Regression: a row's SECOND text change through CDC was lost (found by test/e2e). A change-stream
// row carries no source hash, so it is stored with the UNHASHED text hash; its next change came
// in UNHASHED too, "equal" to the stored one, and was applied as a metadata-only update: the new
// text never embedded (until a hash pass). Then UNHASHED rows were compared by rendered text; now
// the stream stores every row with its real source hashes (UNHASHED is gone), which also holds.
// Also checked: a metadata-only change of such a row still embeds nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { eventually } from "../harness.ts";
import { createWorld, expectedSet, sortedEntries, storedSet, streamingTable, tableRow, type World } from "../domains/sync/world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 20 });
  table = await streamingTable(w);
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

const converges = () =>
  eventually(async () => JSON.stringify(sortedEntries(await storedSet(w.services, table))) === JSON.stringify(sortedEntries(await expectedSet(w.sql))), 5_000);

describe("happy", () => {
  test("three text changes of one row in a row each arrive; a metadata change after them embeds nothing", async () => {
    for (const body of ["first change", "second change", "third change"]) {
      const inputs = w.fake.counters.inputs;
      await w.sql`UPDATE docs SET body = ${body} WHERE id = 7`;
      await converges();
      expect((await storedSet(w.services, table)).get("7")!.text).toBe(`Title: title 7\n${body}`);
      expect(w.fake.counters.inputs - inputs).toBe(1);
    }
    const inputs = w.fake.counters.inputs;
    await w.sql`UPDATE docs SET category = 'moved' WHERE id = 7`;
    await converges();
    expect((await storedSet(w.services, table)).get("7")!.metadata.category).toBe("moved");
    expect(w.fake.counters.inputs - inputs).toBe(0);
  });
});
