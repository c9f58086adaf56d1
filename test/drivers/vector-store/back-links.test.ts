// Back links (native/graph/graph.cpp `back_links`): an insertion off the event loop tells, for each
// row it added, how many of its base-level neighbours link back to it. The later indexer lets a
// row with LINKS_FOUND or more leave the stray list without searching for it (later.ts `unlinked`),
// and searches only for the rest. What must hold: a row let go that way is found by its own vector.
// Small graphs (connectivity 2, random vectors) leave many rows with few or none, so all kinds
// occur, and rows with one to three back links that no search reaches (a sparse graph's islands).
import { describe, expect, test } from "bun:test";
import { openGraph } from "../../../src/drivers/vector-store/graph.ts";
import { HnswIndex, keyOf } from "../../../src/drivers/vector-store/hnsw.ts";
import { LaterIndexer, LINKS_FOUND } from "../../../src/drivers/vector-store/later.ts";
import { Mirror } from "../../../src/drivers/vector-store/mirror.ts";
import { checkStrays } from "../../../src/drivers/vector-store/strays.ts";
import type { IndexParams } from "../../../src/drivers/vector-store/types.ts";
import { mulberry32 } from "../../../src/shared/prng.ts";

const DIMS = 64;
// One thread: the same graph every run, so the counts below are the same every run.
const PARAMS: IndexParams = { scalar: "i8", connectivity: 2, expansionAdd: 16, expansionSearch: 16, threads: 1 };
const ROWS = 3000;
/** Deep enough that a row it misses is truly cut off (checks go to ~400 at most: planner.ts searchBreadth). */
const DEEP = 400;

function unitVectors(n: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  const out = Float32Array.from({ length: n * DIMS }, () => random() - 0.5);
  for (let i = 0; i < n; i++) {
    const row = out.subarray(i * DIMS, (i + 1) * DIMS);
    const norm = Math.hypot(...row);
    for (let j = 0; j < DIMS; j++) row[j]! /= norm;
  }
  return out;
}

const keys = (from: number, n: number) => BigUint64Array.from({ length: n }, (_, i) => keyOf(from + i, 1));

describe("vecsync binding: back links", () => {
  test("addAsync counts each added row's back links, 255 for a key already present; a row with LINKS_FOUND is found by its own vector", async () => {
    const graph = openGraph(DIMS, PARAMS, PARAMS.expansionSearch, "vecsync");
    const data = unitVectors(ROWS, 5);
    const linked = new Uint8Array(ROWS);
    for (let from = 0; from < ROWS; from += 250) {
      const part = new Uint8Array(250);
      await graph.addAsync!(keys(from, 250), data.slice(from * DIMS, (from + 250) * DIMS), 1, part);
      linked.set(part, from);
    }
    expect(Math.max(...linked)).toBeLessThan(255);
    // A row has 2 × connectivity neighbours at the base level; only they are asked.
    expect(Math.max(...linked)).toBeLessThanOrEqual(2 * PARAMS.connectivity);
    const unlinked = [...linked.keys()].filter((i) => linked[i] === 0);
    expect(unlinked.length).toBeGreaterThan(0);
    expect(unlinked.length).toBeLessThan(ROWS / 4);
    // Rows counted in the last part were cut off by nothing since, so each one with LINKS_FOUND is
    // found. (Earlier parts' rows may have been cut off by later parts: what the sweep after a fill
    // is for.) With fewer, some are not: why one link is not taken for found.
    const last = ROWS - 250;
    const { keys: found } = graph.search(data.slice(last * DIMS), DEEP, 1);
    const missed = new Array(LINKS_FOUND + 1).fill(0);
    for (let i = 0; i < 250; i++) {
      const mine = Array.from(found.subarray(i * DEEP, (i + 1) * DEEP)).includes(keyOf(last + i, 1));
      if (!mine) missed[Math.min(linked[last + i]!, LINKS_FOUND)]++;
    }
    expect(missed[LINKS_FOUND]).toBe(0);
    expect(missed.slice(1, LINKS_FOUND).some((n) => n > 0)).toBe(true);

    // Offered again, with new rows beside them: the present keys answer 255, the new ones their count.
    const again = new Uint8Array(20);
    const mixed = BigUint64Array.from([...keys(0, 10), ...keys(ROWS, 10)]);
    await graph.addAsync!(mixed, Float32Array.from([...data.slice(0, 10 * DIMS), ...unitVectors(10, 6)]), 1, again);
    expect(Array.from(again.subarray(0, 10))).toEqual(new Array(10).fill(255));
    for (const links of again.subarray(10)) expect(links).toBeLessThan(255);
    expect(graph.size()).toBe(ROWS + 10);
  });

  test("a linked array of the wrong type or length is refused before any work starts", async () => {
    const graph = openGraph(DIMS, PARAMS, PARAMS.expansionSearch, "vecsync");
    const data = unitVectors(4, 7);
    expect(() => graph.addAsync!(keys(0, 4), data, 1, new Int8Array(4) as unknown as Uint8Array)).toThrow(/Uint8Array/);
    expect(() => graph.addAsync!(keys(0, 4), data, 1, new Uint8Array(3))).toThrow(/keys.length/);
    expect(graph.size()).toBe(0);
    await graph.addAsync!(keys(0, 4), data, 1); // without one, as before
    expect(graph.size()).toBe(4);
  });
});

describe("the later indexer decides rows by their back links", () => {
  test("after an insertion off the loop, the stray list holds exactly the rows a search by their own vector misses", async () => {
    const failures: string[] = [];
    const spec = { dimensions: DIMS, metadata: [], numericPk: false };
    const owner = { hnsw: new HnswIndex(DIMS, PARAMS, "vecsync"), mirror: new Mirror(spec), status: "ready" as const, closed: false, failed: (event: string, error: unknown) => failures.push(`${event}: ${error}`) };
    const data = unitVectors(ROWS, 9);
    const rowOf = (rid: number) => data.subarray(rid * DIMS, (rid + 1) * DIMS);
    for (let rid = 0; rid < ROWS; rid++) owner.mirror.set(rid, rowOf(rid), [], `p${rid}`, "t", 1);
    // Most rows placed already, as a fill's earlier pages; the last 256 (one insertion, later.ts OFF_LOOP_ROWS) noted now.
    const placed = ROWS - 256;
    owner.hnsw.add(Float64Array.from({ length: placed }, (_, i) => i), new Array(placed).fill(1), data.slice(0, placed * DIMS));
    const later = new LaterIndexer(owner);
    const noted = Array.from({ length: 256 }, (_, i) => placed + i);
    later.note(noted);
    for (const rid of noted) expect(owner.hnsw.strays.has(rid)).toBe(true);
    await later.idle();
    expect(failures).toEqual([]);
    const listed = noted.filter((rid) => owner.hnsw.strays.has(rid));
    // Some were left to the searches (too few back links), and some of those the searches did not find.
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(256 / 2);
    // The searches' own verdict on every noted row, now: the same list.
    checkStrays(owner.hnsw, owner.mirror, noted, "all");
    expect(noted.filter((rid) => owner.hnsw.strays.has(rid))).toEqual(listed);
  });
});
