import { describe, expect, test } from "bun:test";
import { compilePredicate, type GenerationSpec, parseFilter } from "../../../../src/drivers/store-api/index.ts";
import { checkDepths } from "../../../../src/drivers/vector-store/self-search.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { orderScanUs, exactCap, hnswCostUs, type PlanInput, planFiltered, planUnfiltered, rerankWant, routeFiltered, searchBreadth } from "../../../../src/drivers/vector-store/planner.ts";
import { estimateSelectivity, knownMatches } from "../../../../src/drivers/vector-store/selectivity.ts";

const SPEC: GenerationSpec = { dimensions: 4, numericPk: true, metadata: [{ name: "price", type: "float" }] };

describe("happy", () => {
  test("the exact-path cap: HNSW only where it needs at most 400 candidates, and where it is cheaper", () => {
    expect(exactCap(10, 100_000)).toBe(4_000); // 4 % at k = 10: the recall bound
    expect(exactCap(100, 100_000)).toBe(40_000);
    expect(exactCap(10, 1_000_000, 1, 768)).toBe(40_000);
    expect(exactCap(10, 2_000)).toBeGreaterThan(80); // small collections: the cost crossover
    expect(exactCap(10, 2_000)).toBeLessThan(2_000);
    expect(exactCap(10, 100_000, 0.5)).toBe(Math.round(exactCap(10, 100_000) / 2));
  });

  test("the HNSW search widens with the collection and re-scores more of what it finds", () => {
    expect(searchBreadth(5_000, 64)).toBe(64);
    expect(searchBreadth(100_000, 64)).toBe(64);
    expect(searchBreadth(1_000_000, 64)).toBeGreaterThanOrEqual(384);
    expect(searchBreadth(1_000_000, 64)).toBeLessThan(512);
    expect(searchBreadth(1e9, 64)).toBe(1024);
    expect(rerankWant(10, 64)).toBe(30);
    expect(rerankWant(10, searchBreadth(1_000_000, 64))).toBeGreaterThanOrEqual(60);
    expect(rerankWant(100, 64)).toBe(210);
  });

  test("a write check's deepest pass runs at the depth unfiltered searches run at, so a stray is a row searches miss", () => {
    const at = (live: number) => planUnfiltered({ k: 10, liveRows: live, dims: 768, indexReady: true, expansionSearch: 64, calibration: null });
    const deepest = (live: number) => checkDepths(10, 64, live, live).at(-1);
    expect(checkDepths(10, 64, 50_000, 50_000)).toEqual([10, 64]);
    expect(checkDepths(10, 64, 40, 40)).toEqual([10, 40]); // none past the index's size
    expect(checkDepths(10, 64, 1_000_000, 1_000_000)).toEqual([10, 64, searchBreadth(1_000_000, 64)]);
    for (const live of [50_000, 300_000, 1_000_000, 10_000_000]) {
      const plan = at(live);
      if (plan.path !== "hnsw") throw new Error("expected the HNSW path");
      expect(deepest(live)).toBe(plan.firstKq);
    }
  });

  test("routing: exact (with a bounded read) under the cap, HNSW with the estimate above it", () => {
    expect(routeFiltered(0.005, 100_000, 4_000)).toEqual({ path: "exact", limit: 6_000 });
    expect(routeFiltered(0.05, 100_000, 4_000)).toEqual({ path: "hnsw", selectivity: 0.05 });
  });

  test("selectivity estimates from the mirror are close, and skip deleted rows", () => {
    const mirror = new Mirror(SPEC);
    const v = Float32Array.from([1, 0, 0, 0]);
    for (let rid = 1; rid <= 20_000; rid++) mirror.set(rid, v, [(rid * 7919) % 1000], String(rid), "");
    for (let rid = 1; rid <= 20_000; rid += 2) if ((rid * 7919) % 1000 >= 500) mirror.remove(rid);
    const estimate = (filter: unknown) => estimateSelectivity(compilePredicate(parseFilter(filter, SPEC.metadata)!, mirror.access), mirror, 1_000);
    expect(estimate({ price: { lt: 1000 } })).toBe(1);
    expect(estimate({ price: { lt: 50 } })).toBeCloseTo(50 / 750, 1);
    expect(estimate({ price: { lt: 10 } })).toBeLessThan(0.03);
    expect(estimate({ price: { gte: 2000 } })).toBe(0);
  });

  test("plans: unfiltered HNSW re-scores its want; a selective filter reads at most the limit and carries the plan past it", () => {
    const input: PlanInput = { k: 10, liveRows: 100_000, dims: 384, indexReady: true, expansionSearch: 64, calibration: null };
    expect(planUnfiltered({ ...input, liveRows: 2_000 })).toEqual({ path: "exact" });
    expect(planUnfiltered({ ...input, indexReady: false })).toEqual({ path: "exact" });
    expect(planUnfiltered(input)).toEqual({ path: "hnsw", want: 30, firstKq: 64, maxKq: 512, rescore: 30, exactIfShort: false });
    // Hybrid's vector side: 20 rows, the first 10 exact: re-ranked as a search of 10 would be, never fewer than 20.
    expect(planUnfiltered({ ...input, k: 20 })).toMatchObject({ want: 50, rescore: 50 });
    expect(planUnfiltered({ ...input, k: 20, exactTop: 10 })).toMatchObject({ want: 30, rescore: 30, firstKq: 64 });
    expect(planUnfiltered({ ...input, k: 40, exactTop: 10 })).toMatchObject({ want: 40, rescore: 40 });

    const mirror = new Mirror(SPEC);
    const v = Float32Array.from([1, 0, 0, 0]);
    for (let rid = 0; rid < 20_000; rid++) mirror.set(rid, v, [rid % 1000], String(rid), "");
    const pred = (filter: unknown) => compilePredicate(parseFilter(filter, SPEC.metadata)!, mirror.access);
    const small = { ...input, liveRows: 20_000, dims: 4 };
    const cap = exactCap(10, 20_000, 1, 4);
    const selective = planFiltered(small, pred({ price: { lt: 10 } }), mirror);
    expect(selective).toMatchObject({ path: "exact-bounded", limit: Math.ceil(cap * 1.5), beyond: { path: "hnsw", exactIfShort: true } });
    expect(planFiltered(small, pred({ price: { lt: 500 } }), mirror)).toMatchObject({ path: "hnsw", want: 10, exactIfShort: true });
    expect(planFiltered({ ...small, indexReady: false }, pred({ price: { lt: 500 } }), mirror)).toEqual({ path: "exact" });
    // A calibration that found no HNSW depth good enough at that selectivity sends it exact.
    const calibration = { liveRows: 20_000, bands: [{ selectivity: 0.5, choice: "exact" as const, recall: 1 }] };
    expect(planFiltered({ ...small, calibration }, pred({ price: { lt: 500 } }), mirror)).toEqual({ path: "exact" });
    // …up to twice as broad a filter; past that the exact choice does not carry over (HNSW, depth 1).
    const narrow = { liveRows: 20_000, bands: [{ selectivity: 0.2, choice: "exact" as const, recall: 1 }] };
    expect(planFiltered({ ...small, calibration: narrow }, pred({ price: { lt: 350 } }), mirror)).toEqual({ path: "exact" });
    expect(planFiltered({ ...small, calibration: narrow }, pred({ price: { lt: 500 } }), mirror)).toEqual(planFiltered(small, pred({ price: { lt: 500 } }), mirror));
  });

  test("a keyword = or in filter has an exact match count, kept through updates and deletes; others are sampled", () => {
    const spec: GenerationSpec = { ...SPEC, metadata: [{ name: "category", type: "keyword" }, { name: "price", type: "float" }] };
    const mirror = new Mirror(spec);
    const v = Float32Array.from([1, 0, 0, 0]);
    for (let rid = 0; rid < 100_000; rid++) mirror.set(rid, v, [`c${rid % 20}`, rid % 100], String(rid), "");
    const known = (filter: unknown) => knownMatches(parseFilter(filter, spec.metadata)!, mirror);
    expect(known({ category: "c3" })).toBe(5_000);
    expect(known({ category: { in: ["c3", "c4", "c3"] } })).toBe(10_000);
    expect(known({ category: "none" })).toBe(0);
    expect(known({ price: { lt: 5 } })).toBeNull();
    expect(known({ category: { neq: "c3" } })).toBeNull();
    expect(known({ category: "c3", price: { lt: 5 } })).toBeNull();
    mirror.remove(3); // c3
    mirror.setMetadata(23, ["c4", 1]); // c3 → c4
    mirror.set(43, v, [null, 1], "43", ""); // c3 → null
    expect(known({ category: "c3" })).toBe(4_997);
    expect(known({ category: "c4" })).toBe(5_001);
    // 5,000 of 100,000 sits above the exact cap of 4,000: with the count known it always goes to HNSW.
    const input: PlanInput = { k: 10, liveRows: mirror.liveCount, dims: 4, indexReady: true, expansionSearch: 64, calibration: null };
    const pred = compilePredicate(parseFilter({ category: "c5" }, spec.metadata)!, mirror.access);
    expect(planFiltered(input, pred, mirror, known({ category: "c5" }))).toMatchObject({ path: "hnsw" });
  });

  test("matches scanned from a column order go exact wherever the scan costs less than the HNSW search", () => {
    const mirror = new Mirror({ ...SPEC, metadata: [{ name: "price", type: "float" }] });
    const pred = () => true;
    const at = (dims: number): PlanInput => ({ k: 10, liveRows: 100_000, dims, indexReady: true, expansionSearch: 64, calibration: null });
    // 5 % of 100k × 512 (bench http): a 0.2 ms scan against an HNSW search for 320.
    expect(orderScanUs(5_000, 512)).toBeLessThan(hnswCostUs(320, 512) / 2);
    expect(planFiltered(at(512), pred, mirror, 5_000, true)).toEqual({ path: "exact" });
    expect(planFiltered(at(512), pred, mirror, 5_000, false)).toMatchObject({ path: "hnsw" });
    // Half the rows: HNSW needs only its usual breadth, the scan would read 50,000 rows.
    expect(planFiltered(at(512), pred, mirror, 50_000, true)).toMatchObject({ path: "hnsw" });
    // A calibration that chose the exact path for the band keeps it.
    const exactBand = { liveRows: 100_000, bands: [{ selectivity: 0.5, choice: "exact" as const, recall: 1 }] };
    expect(planFiltered({ ...at(512), calibration: exactBand }, pred, mirror, 50_000, true)).toEqual({ path: "exact" });
  });
});
