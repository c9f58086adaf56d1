// Index keys are row versions (hnsw.ts): a replaced or deleted row's old key stays in the graph,
// dead, and is never returned; dead keys past a quarter of the index are compacted away; rows
// the graph cannot reach are found by the sweep and still returned (strays.ts).
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkIndexFile } from "../../../src/drivers/vector-store/index-file.ts";
import type { GenerationSpec, UpsertRow } from "../../../src/drivers/vector-store/types.ts";
import { makeWorld, rng } from "./helpers.ts";

const SPEC: GenerationSpec = { dimensions: 32, metadata: [{ name: "n", type: "integer" }], numericPk: true };
// Small exact cap: the HNSW path answers even on this small data.
const OPTS = { exactCapScale: 0.01, index: { threads: 1 } };

function randomRows(from: number, to: number, seed: number): UpsertRow[] {
  const rand = rng(seed);
  const out: UpsertRow[] = [];
  for (let id = from; id <= to; id++) {
    const vector = Float32Array.from({ length: SPEC.dimensions }, () => rand() - 0.5);
    out.push({ pk: String(id), textHash: `t${id}-${seed}`, metaHash: "m", text: `row ${id}`, metadata: { n: id }, vector });
  }
  return out;
}

describe("happy", () => {
  test("a replaced vector's old key is dead: searching the old vector finds the row only at its new score", async () => {
    await using w = await makeWorld();
    const store = await w.open(OPTS);
    await store.createCollection("vt_k", SPEC);
    const first = randomRows(1, 3000, 1);
    await store.upsert("vt_k", first);
    const moved = randomRows(1, 100, 2);
    await store.upsert("vt_k", moved);
    await store.delete("vt_k", ["101", "102"]);
    await store.whenReady("vt_k");
    for (const [i, row] of first.slice(0, 102).entries()) {
      const { hits, path } = await store.search("vt_k", { vector: row.vector, k: 5 });
      expect(path).toBe("hnsw");
      expect(hits[0]?.pk === row.pk && hits[0].score > 0.999).toBe(false); // neither moved (i < 100) nor deleted
      if (i >= 100) expect(hits.map((h) => h.pk)).not.toContain(row.pk);
    }
    for (const row of moved) expect((await store.search("vt_k", { vector: row.vector, k: 1, filter: { n: { gte: 0 } } })).hits[0]?.pk).toBe(row.pk);
    expect((await store.stats("vt_k")).rows).toBe(2998);
  });

  test("dead keys past a quarter of the index are compacted; the file then holds only live rows", async () => {
    await using w = await makeWorld();
    const events: string[] = [];
    const store = await w.open({ ...OPTS, log: (e) => events.push(e) });
    await store.createCollection("vt_k", SPEC);
    await store.upsert("vt_k", randomRows(1, 4000, 1));
    await store.delete("vt_k", Array.from({ length: 1500 }, (_, i) => String(2 * i + 1)));
    await store.whenReady("vt_k");
    expect(events).toContain("vector_store.index_compact");
    for (const row of randomRows(1, 40, 1)) {
      const { hits } = await store.search("vt_k", { vector: row.vector, k: 1 });
      expect(hits[0]?.pk === row.pk).toBe(Number(row.pk) % 2 === 0 || Number(row.pk) > 3000);
    }
    await store.close();
    const meta = JSON.parse(readFileSync(join(w.indexDir, "vt_k.g1.json"), "utf8"));
    expect(checkIndexFile(join(w.indexDir, meta.file), { dimensions: 32, bytesPerVector: 32, connectivity: 16 })).toEqual({ count: 2500 });
  });
  test("a compaction builds beside the serving index: searches stay on the graph and find every row, old and rewritten, until the swap", async () => {
    await using w = await makeWorld();
    const events: string[] = [];
    const store = await w.open({ ...OPTS, log: (e) => events.push(e) });
    await store.createCollection("vt_k", SPEC);
    const first = randomRows(1, 4000, 1);
    await store.upsert("vt_k", first);
    await store.whenReady("vt_k");
    // 1,500 rows rewritten: 1,500 dead of 5,500 keys passes a quarter, so this write starts a compaction.
    const moved = randomRows(1, 1500, 2);
    await store.upsert("vt_k", moved);
    expect(events).toContain("vector_store.index_compact");
    expect(events).not.toContain("vector_store.index_compacted");
    expect(store.status("vt_k")).toBe("ready");
    // Written while the compaction runs: the catch-up puts them in the new index.
    const during = randomRows(4001, 4100, 3);
    await store.upsert("vt_k", during);
    for (const row of [...moved.slice(0, 30), ...first.slice(3000, 3030), ...during.slice(0, 30)]) {
      const { hits, path } = await store.search("vt_k", { vector: row.vector, k: 1 });
      expect(path).toBe("hnsw");
      expect(hits[0]?.pk).toBe(row.pk);
    }
    await store.whenReady("vt_k");
    expect(events).toContain("vector_store.index_compacted");
    for (const row of [...moved.slice(0, 30), ...first.slice(3000, 3030), ...during.slice(0, 30)]) {
      expect((await store.search("vt_k", { vector: row.vector, k: 1 })).hits[0]?.pk).toBe(row.pk);
    }
    await store.close();
    const meta = JSON.parse(readFileSync(join(w.indexDir, "vt_k.g1.json"), "utf8"));
    expect(checkIndexFile(join(w.indexDir, meta.file), { dimensions: 32, bytesPerVector: 32, connectivity: 16 })).toEqual({ count: 4100 });
  });
});

describe("errors", () => {
  test("a graph link out of bounds is named before usearch reads the file", async () => {
    await using w = await makeWorld();
    const store = await w.open(OPTS);
    await store.createCollection("vt_k", SPEC);
    await store.upsert("vt_k", randomRows(1, 500, 1));
    await store.close();
    const meta = JSON.parse(readFileSync(join(w.indexDir, "vt_k.g1.json"), "utf8"));
    const path = join(w.indexDir, meta.file);
    const original = readFileSync(path);
    const buf = Buffer.from(original);
    // The first node's first level-0 neighbour: after the vectors, the 64-byte head, the 40-byte
    // graph head, one i16 level per node, then the node's u64 key, i16 level and u32 count.
    const first = 8 + 500 * 32 + 64 + 40 + 2 * 500 + 8 + 2 + 4;
    buf.writeUInt32LE(500, first);
    const spec = { dimensions: 32, bytesPerVector: 32, connectivity: 16 };
    writeFileSync(path, buf);
    expect(checkIndexFile(path, spec)).toMatch(/node 0 links outside the graph/);
    writeFileSync(path, original.subarray(0, original.length - 10));
    expect(checkIndexFile(path, spec)).toMatch(/shorter than its graph/);
  });
});
