import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../../harness.ts";
import type { ColumnConfig, VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { COLUMNS, createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, updateTableRow, type World, taskDone } from "./world.ts";

let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: 400 });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const done = (id: string) => taskDone(w, id);

async function synced(): Promise<VectorTableRow> {
  const table = await newVectorTable(w);
  await done((await enqueueFill(w, table)).id);
  return table;
}

/** What a PUT changing the configuration does: new config, version + 1, pending_rebackfill, the task. */
async function put(table: VectorTableRow, changes: Partial<VectorTableRow>) {
  const row = (await tableRow(w, table.id))!;
  await updateTableRow(w, table.id, { ...changes, configVersion: row.configVersion + 1, syncStatus: "pending_rebackfill" });
  return enqueueFill(w, table, "rebackfill");
}

describe("happy", () => {
  test("a metadata column change re-embeds nothing: every vector is copied into the new generation", async () => {
    const table = await synced();
    const columns: ColumnConfig[] = [...COLUMNS.filter((c) => c.name !== "price"), { name: "id", role: "metadata", filter_type: "integer" }];
    const before = w.fake.counters.inputs;
    const liveBefore = w.services.vectors.generations(table.vectorstoreCollection).live;
    await done((await put(table, { columns })).id);
    expect(w.fake.counters.inputs - before).toBe(0);
    const gens = w.services.vectors.generations(table.vectorstoreCollection);
    expect(gens.live).toBeGreaterThan(liveBefore);
    expect(gens.building).toEqual([]);
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql, columns)));
    expect((await tableRow(w, table.id))!).toMatchObject({ syncStatus: "synced", totalRows: 400, syncedRows: 400 });
  });

  test("a model/dimension change re-embeds every row", async () => {
    const table = await synced();
    const before = w.fake.counters.inputs;
    await done((await put(table, { embeddingDimensions: 48 })).id);
    expect(w.fake.counters.inputs - before).toBe(400);
    const after = { ...table, embeddingDimensions: 48 };
    expect(sortedEntries(await storedSet(w.services, after))).toEqual(sortedEntries(await expectedSet(w.sql)));
  });

  test("a prefix change re-embeds every row (the text changed), queries answer from the old generation until the swap", async () => {
    const table = await synced();
    const columns: ColumnConfig[] = COLUMNS.map((c) => (c.name === "title" ? { ...c, name_prefix: "T: " } : c));
    w.fake.set({ latencyMs: 30 });
    try {
      const before = w.fake.counters.inputs;
      const task = await put(table, { columns });
      // While building: the live generation still has the old texts, whole.
      await eventually(() => w.services.vectors.generations(table.vectorstoreCollection).building.length > 0, 10_000);
      const during = await storedSet(w.services, table);
      expect(during.size).toBe(400);
      expect(during.get("1")!.text).toBe("Title: title 1\nbody text of row 1");
      await done(task.id);
      expect(w.fake.counters.inputs - before).toBe(400);
      expect((await storedSet(w.services, table)).get("1")!.text).toBe("T: title 1\nbody text of row 1");
    } finally {
      w.fake.set({ latencyMs: 0 });
    }
  });
});
