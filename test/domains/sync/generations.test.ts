// Building generations no fill task owns are dropped (issue 12, item 6): by the failed-for-good
// hook of the task that built them, and by the periodic sweep for those whose process died first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generationSpec } from "../../../src/domains/vector-tables/render.ts";
import { dropOrphanGenerations } from "../../../src/domains/sync/generations.ts";
import { createWorld, enqueueFill, newVectorTable, type World } from "./world.ts";

let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: 10 });
});
afterAll(() => w.dispose());

describe("happy", () => {
  test("the sweep drops a building generation whose table has no active fill task, and keeps one that has", async () => {
    const orphaned = await newVectorTable(w, { syncStatus: "error" });
    const owned = await newVectorTable(w);
    const live = w.services.vectors.generations(orphaned.vectorstoreCollection).live;
    await w.services.vectors.createGeneration(orphaned.vectorstoreCollection, generationSpec(orphaned));
    const building = await w.services.vectors.createGeneration(owned.vectorstoreCollection, generationSpec(owned));
    await enqueueFill(w, owned, "rebackfill"); // pending: the scheduler is not started in this file
    await dropOrphanGenerations(w.services);
    expect(w.services.vectors.generations(orphaned.vectorstoreCollection)).toEqual({ live, building: [] });
    expect(w.services.vectors.generations(owned.vectorstoreCollection).building).toEqual([building]);
  });
});
