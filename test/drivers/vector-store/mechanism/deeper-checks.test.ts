// A self-check in short steps (a sweep, the later indexer) runs each step's first pass at once and
// holds the rows it missed for the deeper passes in batches (strays.ts DeeperChecks). Done that
// way, it must list exactly the strays that checking every row through all passes lists.
import { describe, expect, test } from "bun:test";
import { addCurrentVersions } from "../../../../src/drivers/vector-store/adds.ts";
import { HnswIndex } from "../../../../src/drivers/vector-store/hnsw.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { DEFAULT_INDEX_PARAMS } from "../../../../src/drivers/vector-store/options.ts";
import { checkPasses } from "../../../../src/drivers/vector-store/self-search.ts";
import { checkStrays, DeeperChecks } from "../../../../src/drivers/vector-store/strays.ts";
import type { GenerationSpec } from "../../../../src/drivers/store-api/index.ts";
import { rng } from "../helpers.ts";

const SPEC: GenerationSpec = { dimensions: 256, numericPk: true, metadata: [] };
const TWINS = 40; // one vector: a search by it finds ten of them, so most are strays for sure

function built(rows = 12_000, dims = 256, expansionAdd = DEFAULT_INDEX_PARAMS.expansionAdd): { hnsw: HnswIndex; mirror: Mirror; rids: number[] } {
  // Uniform random directions: nothing to navigate by, so the first pass (ef ≈ 10) misses some rows the deeper ones find.
  const rand = rng(17);
  const mirror = new Mirror({ ...SPEC, dimensions: dims });
  const twin = Float32Array.from({ length: dims }, () => rand() * 2 - 1);
  const rids = Array.from({ length: rows + TWINS }, (_, rid) => rid);
  for (const rid of rids) {
    const v = rid < TWINS ? twin.slice() : Float32Array.from({ length: dims }, () => rand() * 2 - 1);
    mirror.set(rid, v, [], String(rid), "", 1);
  }
  const hnsw = new HnswIndex(dims, { ...DEFAULT_INDEX_PARAMS, expansionAdd });
  addCurrentVersions(hnsw, mirror, rids);
  return { hnsw, mirror, rids };
}

describe("happy", () => {
  // 12k rows: two passes (ef 10, 64); 110k: three, the search breadth past 100k rows (planner.ts searchBreadth).
  // The 110k index is built shallow (expansion 24: a sixth of the build's time, and a graph that
  // leaves the deeper passes more to find) and checked on a quarter of its rows (the twins among
  // them), both ways: the passes' depths are still the whole index's.
  for (const [rows, dims, passes, checked, expansionAdd] of [[12_000, 256, 2, 12_040, 128], [110_000, 16, 3, 27_500, 24]] as const) {
    test(`${rows} × ${dims}: each pass in steps, the next in batches: the same strays as every pass on every row`, async () => {
      const { hnsw, mirror, rids: all } = built(rows, dims, expansionAdd);
      const rids = all.slice(0, checked);
      expect(checkPasses(hnsw, 10)).toBe(passes);
      await checkStrays(hnsw, mirror, rids);
      const whole = [...hnsw.strays].sort((a, b) => a - b);
      expect(whole.length).toBeGreaterThanOrEqual(TWINS - 10 * passes); // each pass finds at most ten twins (k)

      for (const rid of rids) hnsw.strays.delete(rid);
      const deeper = new DeeperChecks();
      let held = 0;
      for (let i = 0; i < rids.length || deeper.waiting > 0; ) {
        if (deeper.full || i >= rids.length) await deeper.run(hnsw, mirror);
        else {
          const missed = await checkStrays(hnsw, mirror, rids.slice(i, (i += 50)), { passes: 0 });
          held += missed.length;
          deeper.hold(hnsw, missed, 1);
        }
      }
      expect([...hnsw.strays].sort((a, b) => a - b)).toEqual(whole);
      // The deeper passes had work of their own: rows the first pass missed that they found.
      expect(held).toBeGreaterThan(whole.length);
    });
  }

  test("a row left as it was until its batch runs; rows of a replaced index are dropped", async () => {
    const { hnsw, mirror } = built();
    const deeper = new DeeperChecks();
    const missed = await checkStrays(hnsw, mirror, Array.from({ length: TWINS }, (_, rid) => rid), { passes: 0 });
    expect(missed.length).toBeGreaterThanOrEqual(TWINS - 10); // the twins the first pass cannot tell apart
    expect(hnsw.strays.size).toBe(0); // undecided, so not listed yet
    deeper.hold(hnsw, missed, 1);
    const other = new HnswIndex(SPEC.dimensions, DEFAULT_INDEX_PARAMS);
    deeper.hold(other, [], 1);
    expect(deeper.waiting).toBe(0);
    deeper.hold(hnsw, missed, 1);
    while (deeper.waiting > 0) await deeper.run(hnsw, mirror);
    // Each pass finds at most ten twins (k): most of the held ones are strays now, and only held ones.
    expect(hnsw.strays.size).toBeGreaterThanOrEqual(TWINS / 2);
    expect([...hnsw.strays].every((rid) => missed.includes(rid))).toBe(true);
  });
});
