import { describe, expect, test } from "bun:test";
import { exactTopK, rescore } from "../../../src/drivers/vector-store/exact.ts";
import { Mirror } from "../../../src/drivers/vector-store/mirror.ts";
import type { GenerationSpec } from "../../../src/drivers/vector-store/types.ts";
import { clusteredVectors, cosine } from "./helpers.ts";

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

  test("a small collection holds a small vector array", () => {
    const mirror = new Mirror({ ...SPEC, dimensions: 1536 });
    mirror.set(1, new Float32Array(1536).fill(1), [1], "1", "");
    expect(mirror.bytes()).toBeLessThan(1100 * 1536 * 4);
  });
});
