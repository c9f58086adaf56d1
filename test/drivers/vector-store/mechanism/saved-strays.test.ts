// A checkpoint description's stray list (saved-strays.ts): the index's strays first, then the rows
// not yet searched for, each row once, cut at the cap; whole only when swept and not cut.
import { describe, expect, test } from "bun:test";
import { savedStrays, savedStraysCap } from "../../../../src/drivers/vector-store/saved-strays.ts";
import { DEFAULT_INDEX_PARAMS } from "../../../../src/drivers/vector-store/index.ts";

const indexOf = (strays: number[], liveSize: number) => ({ strays: new Set(strays), liveSize, params: DEFAULT_INDEX_PARAMS });

describe("saved strays", () => {
  test("strays first, then unverified rows not among them, each once, in their order", () => {
    const saved = savedStrays(indexOf([9, 4, 7], 1000), { checkedAll: true, sweepMs: 12.4, unverifiedRows: [4, 20, 3, 20, 9, 3, 15] });
    expect(saved.rows).toEqual([9, 4, 7, 20, 3, 15]);
    expect(saved.whole).toBe(true);
    expect(saved.sweepMs).toBe(12);
  });

  test("an unswept index's list is not whole, however short", () => {
    expect(savedStrays(indexOf([1], 10), { checkedAll: false, sweepMs: 0, unverifiedRows: [2] })).toMatchObject({ rows: [1, 2], whole: false });
  });

  test("past the cap: the first cap rows, not whole; at the cap exactly: whole", () => {
    const cap = savedStraysCap(1000, true);
    const unverified = Array.from({ length: cap + 5 }, (_, i) => i + 1);
    const over = savedStrays(indexOf([], 1000), { checkedAll: true, sweepMs: 0, unverifiedRows: unverified });
    expect(over.rows.length).toBe(cap);
    expect(over.rows[cap - 1]).toBe(cap);
    expect(over.whole).toBe(false);
    const at = savedStrays(indexOf([], 1000), { checkedAll: true, sweepMs: 0, unverifiedRows: unverified.slice(0, cap) });
    expect(at.rows.length).toBe(cap);
    expect(at.whole).toBe(true);
  });

  test("a stray list longer than the cap is cut before any unverified row", () => {
    const cap = savedStraysCap(10, true);
    const strays = Array.from({ length: cap + 1 }, (_, i) => i);
    const saved = savedStrays(indexOf(strays, 10), { checkedAll: true, sweepMs: 0, unverifiedRows: [cap + 7] });
    expect(saved.rows).toEqual(strays.slice(0, cap));
    expect(saved.whole).toBe(false);
  });
});
