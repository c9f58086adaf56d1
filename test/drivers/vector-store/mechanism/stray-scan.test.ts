// The strays' codes copied into one buffer for the searches' scan (stray-scan.ts): the copy
// follows the stray set, so a rewritten or removed stray is scanned as it is now.
import { describe, expect, test } from "bun:test";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { CountedSet, StrayCodes } from "../../../../src/drivers/vector-store/stray-scan.ts";
import type { GenerationSpec } from "../../../../src/drivers/store-api/index.ts";
import { mulberry32 } from "../../../../src/shared/prng.ts";
import { clusteredVectors } from "../helpers.ts";

const SPEC: GenerationSpec = { dimensions: 48, numericPk: true, metadata: [{ name: "n", type: "integer" }] };

describe("happy", () => {
  test("the scan finds each stray by its own vector; a rewritten stray by its new one, a removed one not at all; the filter is applied", () => {
    const vectors = clusteredVectors(600, SPEC.dimensions, 5);
    const mirror = new Mirror(SPEC);
    const strays = new CountedSet();
    vectors.forEach((v, rid) => {
      mirror.set(rid, v, [rid], String(rid), "", 1);
      if (rid % 2 === 0) strays.add(rid);
    });
    const scan = new StrayCodes();
    const all = () => true;
    for (const rid of [0, 2, 100, 598]) expect(scan.nearest(strays, mirror, vectors[rid]!.slice(), 1, 1, all)[0]!.rid).toBe(rid);
    // Row 1 is no stray: never returned, even searched by its own vector.
    expect(scan.nearest(strays, mirror, vectors[1]!.slice(), 5, 1, all).map((c) => c.rid)).not.toContain(1);

    // Rewritten: it leaves the set and comes back with its new vector (generation.ts retireVersions).
    strays.delete(100);
    mirror.set(100, vectors[1]!, [100], "100", "", 2);
    strays.add(100);
    expect(scan.nearest(strays, mirror, vectors[1]!.slice(), 1, 1, all)[0]!.rid).toBe(100);
    strays.delete(2);
    expect(scan.nearest(strays, mirror, vectors[2]!.slice(), 5, 1, all).map((c) => c.rid)).not.toContain(2);

    // A filter passing 1 in 10 strays: still the `want` nearest of those that pass, all passing.
    const tenth = (rid: number) => rid % 20 === 0;
    const found = scan.nearest(strays, mirror, vectors[40]!.slice(), 5, 0.1, tenth);
    expect(found.length).toBe(5);
    expect(found[0]!.rid).toBe(40);
    expect(found.every((c) => tenth(c.rid))).toBe(true);
    // Asked for too few at first (a share guessed high): it asks again for all of them.
    expect(scan.nearest(strays, mirror, vectors[40]!.slice(), 5, 1, tenth).map((c) => c.rid)).toEqual(found.map((c) => c.rid));
  });

  test("the copy follows the set a change at a time: after adds, deletes, rewrites and a clear, every scan answers as a copy made anew", () => {
    const dims = SPEC.dimensions;
    const vectors = clusteredVectors(1_200, dims, 7);
    const mirror = new Mirror(SPEC);
    const strays = new CountedSet();
    const version = new Map<number, number>();
    const rand = mulberry32(16);
    const pick = () => Math.floor(rand() * vectors.length);
    vectors.forEach((v, rid) => {
      mirror.set(rid, v, [rid], String(rid), "", 1);
      version.set(rid, 1);
      if (rid % 3 === 0) strays.add(rid);
    });
    const followed = new StrayCodes();
    const all = () => true;
    // Rows rewritten with another row's vector tie: which of them comes first is the copy's order.
    const nearestDistances = (scan: StrayCodes, q: Float32Array) => scan.nearest(strays, mirror, q, 10, 1, all).map((c) => c.distance);
    const everyStray = (scan: StrayCodes, q: Float32Array) => new Set(scan.nearest(strays, mirror, q, strays.size, 1, all).map((c) => `${c.rid}:${c.distance}`));
    let rewritten = 0;
    for (let round = 0; round < 60; round++) {
      // Between two searches: a few changes, as a sweep or a change stream makes them.
      const changes = round === 30 ? 0 : 1 + Math.floor(rand() * 40);
      for (let c = 0; c < changes; c++) {
        const rid = pick();
        const roll = rand();
        if (roll < 0.4) strays.add(rid);
        else if (roll < 0.8) strays.delete(rid);
        else if (strays.has(rid)) {
          // Rewritten (generation.ts retireVersions): out of the set, a new vector, back in.
          strays.delete(rid);
          const v = version.get(rid)! + 1;
          version.set(rid, v);
          mirror.set(rid, vectors[pick()]!, [rid], String(rid), "", v);
          strays.add(rid);
          rewritten++;
        }
      }
      if (round === 45) {
        strays.clear();
        for (let rid = 0; rid < vectors.length; rid += 7) strays.add(rid);
      }
      const q = vectors[pick()]!.slice();
      const anew = new StrayCodes();
      expect(nearestDistances(followed, q)).toEqual(nearestDistances(anew, q));
      // Every stray and only strays, each at the distance of its current vector.
      const every = everyStray(followed, q);
      expect(every).toEqual(everyStray(anew, q));
      expect(new Set([...every].map((e) => Number(e.split(":")[0])))).toEqual(new Set(strays));
    }
    expect(rewritten).toBeGreaterThan(10);
  });

  test("the set counts only real changes", () => {
    const s = new CountedSet();
    s.add(1);
    s.add(1);
    s.delete(2);
    s.delete(1);
    s.clear();
    expect(s.changes).toBe(2);
  });
});
