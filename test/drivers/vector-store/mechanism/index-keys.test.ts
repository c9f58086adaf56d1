// Index keys are row versions (hnsw.ts): a replaced or deleted row's old key stays in the graph,
// dead, and is never returned; dead keys past a quarter of the index are compacted away; rows
// the graph cannot reach are found by the sweep and still returned (strays.ts).
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkIndexFile } from "../../../../src/drivers/vector-store/index-file.ts";
import type { GenerationSpec, UpsertRow } from "../../../../src/drivers/store-api/index.ts";
import { makeWorld, rng } from "../helpers.ts";

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

describe("strays across a restart", () => {
  // 40 rows share one vector: a search by it finds ten of them, so the other thirty are strays
  // of a 3,000-row graph (a search by their own vector does not return them), as real duplicates
  // or a graph's cut-off nodes are.
  const same = Float32Array.from({ length: SPEC.dimensions }, (_, i) => Math.sin(i + 1));
  const twins = (from: number, n: number, seed: number): UpsertRow[] =>
    Array.from({ length: n }, (_, i) => ({ pk: String(from + i), textHash: `d${seed}`, metaHash: "m", text: `twin ${from + i}`, metadata: { n: from + i }, vector: same }));
  /** A store holding 3,000 random rows and 40 twins. */
  const withTwins = async (w: Awaited<ReturnType<typeof makeWorld>>) => {
    const store = await w.open(OPTS);
    await store.createCollection("vt_k", SPEC);
    await store.upsert("vt_k", randomRows(1, 3000, 1));
    await store.upsert("vt_k", twins(5001, 40, 1));
    return store;
  };
  // Through the filtered path too (a filter every row passes): twins are the hits scoring 1.
  const found = async (store: Awaited<ReturnType<Awaited<ReturnType<typeof makeWorld>>["open"]>>) =>
    (await store.search("vt_k", { vector: same, k: 100, filter: { n: { gte: 0 } } })).hits.filter((h) => h.score > 0.9999).length;

  test("a checkpoint that listed every stray loads without a sweep; rows written after it are checked at the load; every twin is still found", async () => {
    await using w = await makeWorld();
    const store = await withTwins(w);
    await store.whenReady("vt_k");
    const before = (await store.stats("vt_k")).strays;
    expect(before).toBeGreaterThanOrEqual(20);
    await store.close(); // checkpoints: every row checked, the strays listed
    const saved = JSON.parse(readFileSync(join(w.indexDir, "vt_k.g1.json"), "utf8"));
    expect(saved.strays.whole).toBe(true);
    expect(saved.strays.rows.length).toBe(before);

    const events: [string, Record<string, unknown>][] = [];
    const reopened = await w.open({ ...OPTS, log: (e, f) => events.push([e, f]) });
    await reopened.whenReady("vt_k");
    const loaded = events.find(([e]) => e === "vector_store.index_loaded")![1];
    expect(loaded.strays).toBe("listed");
    expect(events.map(([e]) => e)).not.toContain("vector_store.index_strays"); // no sweep ran
    expect((await reopened.stats("vt_k")).strays).toBe(before);
    const unfiltered = await reopened.search("vt_k", { vector: same, k: 40 });
    expect(unfiltered.path).toBe("hnsw");
    expect(unfiltered.hits.length).toBe(40);
    // Written after the checkpoint and killed before the next (no close): 40 more twins.
    await reopened.upsert("vt_k", twins(6001, 40, 2));
    expect((await reopened.search("vt_k", { vector: same, k: 80 })).hits.length).toBe(80);
    // Twins link to one another, so their write took them off the list by their back links
    // (back-links.ts) and left the search for them to the next quiet spell, which finds their strays.
    await reopened.whenReady("vt_k");
    const written = (await reopened.stats("vt_k")).strays;
    expect(written).toBeGreaterThanOrEqual(before + 20);

    const third: string[] = [];
    const again = await w.open({ ...OPTS, log: (e) => third.push(e) });
    await again.whenReady("vt_k");
    expect(third).not.toContain("vector_store.index_strays");
    expect((await again.stats("vt_k")).strays).toBe(written); // the load checked the rows the file lacked
    // Through HNSW, or exactly where the walk ended short of 80 (hnsw.ts `cut`): 80 rows of one
    // vector, linked to one another, can end a walk that reaches them before it has seen 80.
    const after = await again.search("vt_k", { vector: same, k: 80 });
    expect(["hnsw", "exact-memory"]).toContain(after.path);
    expect(after.hits.length).toBe(80);
    expect(after.hits.filter((h) => h.score > 0.9999).length).toBe(80);
    expect(await found(again)).toBe(80);
  });

  test("rows checked only as they were written: the checkpoint says a sweep is due; the sweep after it makes its description whole", async () => {
    await using w = await makeWorld();
    const store = await withTwins(w);
    await store.checkpoint("vt_k"); // before any sweep: later rows may have cut earlier ones off
    const path = join(w.indexDir, "vt_k.g1.json");
    expect(JSON.parse(readFileSync(path, "utf8")).strays.whole).toBe(false);
    await store.whenReady("vt_k"); // the sweep, then the description rewritten
    const meta = JSON.parse(readFileSync(path, "utf8"));
    expect(meta.strays.whole).toBe(true);
    expect(meta.strays.rows.length).toBe((await store.stats("vt_k")).strays);
    expect(meta.strays.rows.length).toBeGreaterThanOrEqual(20);
  });

  test("a list checked deeper than searches now run is swept after the load; a description of another format or shape is not read, the index rebuilt", async () => {
    await using w = await makeWorld();
    const store = await withTwins(w);
    await store.whenReady("vt_k");
    await store.close();
    const path = join(w.indexDir, "vt_k.g1.json");
    const saved = JSON.parse(readFileSync(path, "utf8"));
    expect(saved.format).toBe(2);
    expect([saved.strays.whole, saved.strays.depth]).toEqual([true, 64]); // 3,040 rows: the configured breadth
    const loadedAs = async (meta: Record<string, unknown>) => {
      writeFileSync(path, JSON.stringify(meta));
      const events: [string, Record<string, unknown>][] = [];
      const reopened = await w.open({ ...OPTS, log: (e, f) => events.push([e, f]) });
      await reopened.whenReady("vt_k");
      expect((await reopened.search("vt_k", { vector: same, k: 40 })).hits.length).toBe(40);
      expect(await found(reopened)).toBe(40);
      await reopened.close();
      const loaded = events.find(([e]) => e === "vector_store.index_loaded");
      return loaded ? loaded[1].strays : events.find(([e]) => e === "vector_store.index_rebuild")![1].reason;
    };
    // Rows reached at depth 200 may be missed at 64: the list says nothing of depth 64.
    expect(await loadedAs({ ...saved, strays: { ...saved.strays, depth: 200 } })).toBe("sweep");
    // An index file is a cache: a description of the format before (the stray fields loose) is rebuilt from libSQL.
    const { strays, ...rest } = JSON.parse(readFileSync(path, "utf8"));
    expect(await loadedAs({ ...rest, format: 1, strays: strays.rows, straysChecked: true, strayDepth: 64, codesChecked: true })).toBe("checkpoint description of format 1, not 2");
    expect(await loadedAs({ ...JSON.parse(readFileSync(path, "utf8")), strays: { rows: [] } })).toBe("unreadable checkpoint description");
  });

  test("a checkpoint saved while a sweep was owed is swept after the load", async () => {
    await using w = await makeWorld();
    const store = await withTwins(w);
    await store.close();
    // As a load leaves it until its sweep ends: the list may be short.
    const path = join(w.indexDir, "vt_k.g1.json");
    const meta = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, JSON.stringify({ ...meta, strays: { ...meta.strays, whole: false, rows: [] } }));
    const events: [string, Record<string, unknown>][] = [];
    const reopened = await w.open({ ...OPTS, log: (e, f) => events.push([e, f]) });
    await reopened.whenReady("vt_k");
    expect(events.find(([e]) => e === "vector_store.index_loaded")![1].strays).toBe("sweep");
    expect(events.map(([e]) => e)).toContain("vector_store.index_strays");
    expect((await reopened.search("vt_k", { vector: same, k: 40 })).hits.length).toBe(40);
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

  test("the check reads through a window: the same answers when nodes straddle its edges", async () => {
    await using w = await makeWorld();
    const store = await w.open(OPTS);
    await store.createCollection("vt_k", SPEC);
    await store.upsert("vt_k", randomRows(1, 3000, 2));
    await store.close();
    const meta = JSON.parse(readFileSync(join(w.indexDir, "vt_k.g1.json"), "utf8"));
    const path = join(w.indexDir, meta.file);
    const spec = { dimensions: 32, bytesPerVector: 32, connectivity: 16 };
    // 1,000 bytes: the window is refilled every few nodes, and a node larger than it grows it.
    for (const windowBytes of [1000, 4096, 1 << 22]) expect(checkIndexFile(path, spec, windowBytes)).toEqual({ count: 3000 });
    const original = readFileSync(path);
    const dv = new DataView(original.buffer, original.byteOffset, original.byteLength);
    // The last node's first level-0 neighbour: walk the nodes from the levels to the last one.
    const graph = 8 + 3000 * 32 + 64;
    const m0 = Number(dv.getBigUint64(graph + 16, true));
    let node = graph + 40 + 2 * 3000;
    for (let slot = 0; slot < 2999; slot++) node += 10 + 4 + 4 * m0 + dv.getInt16(graph + 40 + 2 * slot, true) * (4 + 4 * 16);
    const buf = Buffer.from(original);
    buf.writeUInt32LE(1, node + 10);
    buf.writeUInt32LE(3000, node + 14);
    writeFileSync(path, buf);
    for (const windowBytes of [1000, 1 << 22]) expect(checkIndexFile(path, spec, windowBytes)).toMatch(/node 2999 links outside the graph/);
  });
});
