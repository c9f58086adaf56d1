import { describe, expect, test } from "bun:test";
import { exactTopK, rescore, scanTopK } from "../../../../src/drivers/vector-store/exact.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import type { GenerationSpec } from "../../../../src/drivers/store-api/index.ts";
import { clusteredVectors, cosine } from "../helpers.ts";

const SPEC: GenerationSpec = { dimensions: 8, numericPk: true, metadata: [{ name: "n", type: "integer" }] };

describe("happy", () => {
  test("vectors across page boundaries: stored as unit vectors, gathered and scored exactly", () => {
    const mirror = new Mirror(SPEC);
    const rids = [1, 2, 16_383, 16_384, 16_385, 40_000];
    const vectors = clusteredVectors(rids.length, 8, 3).map((v) => v.map((x) => x * 3)); // not unit length
    rids.forEach((rid, i) => mirror.set(rid, vectors[i]!, [i], `pk${rid}`, `text ${rid}`));
    expect(mirror.liveCount).toBe(6);
    expect(Array.from(mirror.liveRids())).toEqual(rids);
    rids.forEach((rid, i) => {
      const stored = mirror.vectorOf(rid);
      expect(Math.hypot(...stored)).toBeCloseTo(1, 5);
      expect(cosine(stored, vectors[i]!)).toBeCloseTo(1, 6);
      expect(mirror.pkOf(rid)).toBe(`pk${rid}`);
      expect(mirror.textOf(rid)).toBe(`text ${rid}`);
    });
    const query = vectors[3]!.map((x) => x / Math.hypot(...vectors[3]!));
    const expected = rids.map((rid, i) => ({ rid, distance: 1 - cosine(vectors[i]!, query) })).sort((a, b) => a.distance - b.distance);
    const exact = exactTopK(mirror, query, rids, 3);
    expect(exact.map((c) => c.rid)).toEqual(expected.slice(0, 3).map((c) => c.rid));
    exact.forEach((c, i) => expect(c.distance).toBeCloseTo(expected[i]!.distance, 5));
    rescore(mirror, query, rids).forEach((c, i) => expect(c.distance).toBeCloseTo(1 - cosine(vectors[i]!, query), 6));
    mirror.remove(16_384);
    expect(mirror.isLive(16_384)).toBe(false);
    expect(mirror.liveCount).toBe(5);
    expect(mirror.bytes()).toBeGreaterThan(3 * 16_384 * 8 * 4);
  });

  test("the i8 scan finds the exact top-k across slabs, and keeps a whole tie group at its cut", () => {
    const spec = { ...SPEC, dimensions: 64 };
    const mirror = new Mirror(spec);
    const vectors = clusteredVectors(6_000, 64, 11, 20);
    const rids = vectors.map((_, i) => (i < 3_000 ? i : 262_144 + i)); // two slabs
    rids.forEach((rid, i) => mirror.set(rid, vectors[i]!, [i], String(rid), ""));
    for (const q of clusteredVectors(20, 64, 12, 20)) {
      const query = q.map((x) => x / Math.hypot(...q));
      expect(scanTopK(mirror, query, rids, 10)).toEqual(exactTopK(mirror, query, rids, 10).map((c) => ({ rid: c.rid, distance: expect.closeTo(c.distance, 6) })));
    }
    // 60 copies of one vector: exact ranking ties them all, so the scan must hand all 60 on.
    const twin = vectors[5]!;
    const twins = Array.from({ length: 60 }, (_, i) => 600_000 + i);
    twins.forEach((rid) => mirror.set(rid, twin, [0], String(rid), ""));
    const query = twin.map((x) => x / Math.hypot(...twin));
    const found = scanTopK(mirror, query, [...rids, ...twins], 10);
    expect(found.map((c) => c.rid).sort()).toEqual(expect.arrayContaining(twins.map(Number)));
  });

  test("a small collection holds a small vector array", () => {
    const mirror = new Mirror({ ...SPEC, dimensions: 1536 });
    mirror.set(1, new Float32Array(1536).fill(1), [1], "1", "");
    expect(mirror.bytes()).toBeLessThan(1100 * 1536 * 4);
  });
});
