// A keyword column's rows per value (postings.ts, columns.ts): after any sequence of writes,
// moves and removals, each value's rows are exactly the rows holding it, ascending, each once.
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
      const column = keywordColumn();
      const truth = new Map<number, string | null>();
      for (const ops of rounds) {
        for (const { rid, value } of ops) {
          column.set(rid, value);
          truth.set(rid, value);
        }
        // Read between rounds: a rebuilt list must keep taking writes correctly.
        for (const v of VALUES) {
          const expected = [...truth].filter(([, held]) => held === v).map(([rid]) => rid).sort((x, y) => x - y);
          expect([...column.rids!(v)]).toEqual(expected);
          expect(column.count!(v)).toBe(expected.length);
        }
      }
    }),
    { numRuns: 300, seed: 16 },
  );
});

test("a row that leaves a value and comes back is listed once", () => {
  const column = keywordColumn();
  column.set(5, "a");
  column.set(9, "a");
  column.set(5, "b");
  column.set(5, "a");
  column.set(2, "a");
  expect([...column.rids!("a")]).toEqual([2, 5, 9]);
  expect([...column.rids!("b")]).toEqual([]);
  expect([...column.rids!("zzz")]).toEqual([]);
  expect([...column.rids!(3)]).toEqual([]); // not a keyword value: nothing, as the predicate says
});

test("churn keeps a list near its live size", () => {
  const column = keywordColumn();
  for (let i = 0; i < 10; i++) column.set(i, "a");
  const small = column.bytes();
  // 10,000 moves of the same rows between two values, never read: stale entries are dropped as they go.
  for (let n = 0; n < 10_000; n++) column.set(n % 10, n % 20 < 10 ? "b" : "a");
  expect(column.bytes()).toBeLessThan(small + 4 * 1024);
  expect([...column.rids!("a")].length + [...column.rids!("b")].length).toBe(10);
});

test("the mirror answers `in` over several values with their rows merged, ascending", () => {
  const spec = { ...SPEC, metadata: [{ name: "category", type: "keyword" as const }] };
  const mirror = new Mirror(spec);
  const vector = new Float32Array(spec.dimensions).fill(1);
  ["x", "y", "x", "z", "y", "x"].forEach((c, rid) => mirror.set(rid, vector, [c], String(rid), "t"));
  mirror.remove(2);
  expect([...mirror.keywordRids(0, ["y", "x", "y"])!]).toEqual([0, 1, 4, 5]);
  expect(mirror.keywordRids(0, ["w"])!.length).toBe(0);
});
