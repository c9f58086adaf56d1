// A keyword column (columns.ts): ids into a dictionary of its values. After any sequence of
// writes, moves and removals, each value's rows are exactly the rows holding it, ascending, each
// once; its count is theirs; a value no row holds gives its id back.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { keywordColumn } from "../../../../src/drivers/vector-store/columns.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { SPEC } from "../helpers.ts";

const VALUES = ["a", "b", "c", "d"];
const op = fc.record({ rid: fc.integer({ min: 0, max: 300 }), value: fc.constantFrom(...VALUES, null) });

test("each value's rows are the rows holding it, ascending and once, after random writes", () => {
  fc.assert(
    fc.property(fc.array(fc.array(op, { maxLength: 400 }), { minLength: 1, maxLength: 4 }), (rounds) => {
      const column = keywordColumn(301);
      const truth = new Map<number, string | null>();
      for (const ops of rounds) {
        for (const { rid, value } of ops) {
          column.set(rid, value);
          truth.set(rid, value);
        }
        // Read between rounds: a rebuilt list must keep taking writes correctly.
        for (const v of VALUES) {
          const expected = [...truth].filter(([, held]) => held === v).map(([rid]) => rid).sort((x, y) => x - y);
          expect([...column.rids!([v])]).toEqual(expected);
          expect(column.count!(v)).toBe(expected.length);
        }
      }
    }),
    { numRuns: 300, seed: 16 },
  );
});

test("a row that leaves a value and comes back is listed once", () => {
  const column = keywordColumn(16);
  column.set(5, "a");
  column.set(9, "a");
  column.set(5, "b");
  column.set(5, "a");
  column.set(2, "a");
  expect([...column.rids!(["a"])]).toEqual([2, 5, 9]);
  expect([...column.rids!(["b"])]).toEqual([]);
  expect([...column.rids!(["zzz"])]).toEqual([]);
  expect([...column.rids!([3])]).toEqual([]); // not a keyword value: nothing, as the predicate says
  expect([...column.rids!(["b", "a", "zzz"])]).toEqual([2, 5, 9]);
});

test("churn through ever new values keeps the dictionary at the values held", () => {
  const column = keywordColumn(16);
  for (let i = 0; i < 10; i++) column.set(i, `v${i}`);
  const small = column.bytes();
  // 10,000 writes of a new value each to the same ten rows: a value left behind gives its id back.
  for (let n = 10; n < 10_010; n++) column.set(n % 10, `v${n}`);
  // Longer values, and one slot more: a write takes its new value's id before its old one is given back.
  expect(column.bytes()).toBe(small + 10 * 2 * ("v10000".length - "v0".length) + 64);
  expect(column.count!("v0")).toBe(0);
  expect(column.count!("v10009")).toBe(1);
  expect(column.keyOf!("v5")).toBeNull();
  expect(column.get(9)).toBe("v10009");
});

test("the mirror answers `in` over several values with their rows, ascending", () => {
  const spec = { ...SPEC, metadata: [{ name: "category", type: "keyword" as const }] };
  const mirror = new Mirror(spec);
  const vector = new Float32Array(spec.dimensions).fill(1);
  ["x", "y", "x", "z", "y", "x"].forEach((c, rid) => mirror.set(rid, vector, [c], String(rid), "t"));
  mirror.remove(2);
  expect([...mirror.keywordRids(0, ["y", "x", "y"])!]).toEqual([0, 1, 4, 5]);
  expect(mirror.keywordRids(0, ["w"])!.length).toBe(0);
});
