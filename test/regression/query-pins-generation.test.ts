// Issue 12, defect 3: a query read the table's serving model, embedded with it, then searched
// whatever generation was live by then. A swap in between (a PUT changing model and dimensions
// 32 → 48) answered 500 "query vector has 32 dimensions, collection has 48", and with equal
// dimensions searched the new generation with an old-model vector. A query now pins one
// generation for both its embedding and its search (docs/vector-tables.md#query).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, DIMS, enqueueFill, MODEL, newVectorTable, taskDone, updateTableRow, type World } from "../domains/sync/world.ts";
import { generationSpec } from "../../src/domains/vector-tables/render.ts";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 30 });
  w.services.scheduler.start();
  table = await newVectorTable(w);
  await taskDone(w, (await enqueueFill(w, table)).id);
});
afterAll(() => w.dispose());

/** What a re-backfill's end does, by hand: a new generation with the new model, swapped in. */
async function swapIn(model: string, dimensions: number): Promise<{ dropped: Promise<void> }> {
  const collection = table.vectorstoreCollection;
  const spec = { ...generationSpec(table), model, dimensions };
  const generation = await w.services.vectors.createGeneration(collection, spec);
  const vector = () => Float32Array.from({ length: dimensions }, () => Math.random() - 0.5);
  const rows = Array.from({ length: 30 }, (_, i) => ({ pk: String(i + 1), textHash: "t", metaHash: "m", text: `other ${i}`, metadata: {}, vector: vector() }));
  await w.services.vectors.upsert(collection, rows, { generation });
  await updateTableRow(w, table.id, { embeddingModel: model, embeddingDimensions: dimensions, servingModel: model, servingDimensions: dimensions, configVersion: table.configVersion + 1 });
  // The live pointer moves at once; `dropped` resolves once no query holds the old generation.
  const dropped = w.services.vectors.swapGeneration(collection, generation);
  await eventually(() => w.services.vectors.generations(collection).live === generation, 5_000);
  return { dropped };
}

test("a swap while a query's embedding is in flight: the query answers from the generation it embedded for", async () => {
  w.fake.set({ latencyMs: 2_500 }); // long enough for the whole swap to happen meanwhile
  const asked = w.fake.counters.received;
  const answer = w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: w.org.owner.key, body: { query: "Title: title 7\nbody text of row 7", limit: 3 } });
  await eventually(() => w.fake.counters.received > asked, 5_000); // the query's embedding is on its way
  w.fake.set({ latencyMs: 0 });
  const { dropped } = await swapIn("text-embedding-3-large", DIMS + 16);
  const res = await answer;
  expect(res.status).toBe(200);
  const body = await json(res);
  expect(body.model).toBe(MODEL);
  expect(body.results[0]).toMatchObject({ id: "7", embedded_text: "Title: title 7\nbody text of row 7" });
  expect(body.results[0].similarity_score).toBeGreaterThanOrEqual(0.999);
  await dropped;
  // The next query embeds with the new generation's model and dimensions.
  const after = await json(await w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: w.org.owner.key, body: { query: "anything", limit: 1 } }));
  expect(after.model).toBe("text-embedding-3-large");
  expect(w.services.vectors.generations(table.vectorstoreCollection).building).toEqual([]);
});
