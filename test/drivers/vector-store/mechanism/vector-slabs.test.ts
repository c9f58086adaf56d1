// The mirror's vector slabs (vector-slabs.ts): a slab grows by copying only while it is small;
// past that it holds its full size, so a fill never copies (and first-touches) a large slab again.
import { expect, test } from "bun:test";
import { GATHER_ROWS, VectorSlabs } from "../../../../src/drivers/vector-store/vector-slabs.ts";

const DIMS = 8;
const vectorOf = (rid: number) => Float32Array.from({ length: DIMS }, (_, j) => rid + j / 10);

test("a slab past a few thousand rows keeps its array as it fills; every row written reads back; bytes() counts the rows used", () => {
  const slabs = new VectorSlabs(DIMS);
  const write = (rid: number) => {
    slabs.ensure(rid);
    slabs.slabOf(rid).set(vectorOf(rid), slabs.offsetOf(rid));
  };
  for (let rid = 0; rid <= 5000; rid++) write(rid);
  const large = slabs.slabOf(5000);
  for (let rid = 5001; rid < 200_000; rid++) write(rid);
  expect(slabs.slabOf(199_999)).toBe(large); // no copy since it passed 4,096 rows
  for (const rid of [0, 63, 64, 4095, 4096, 5000, 123_456, 199_999]) {
    const at = slabs.offsetOf(rid);
    expect(Array.from(slabs.slabOf(rid).subarray(at, at + DIMS))).toEqual(Array.from(vectorOf(rid)));
  }
  // f32 (4 B) and codes (1 B) of the gather area and the 200,000 rows used, not of the slab's capacity.
  expect(slabs.bytes()).toBe((GATHER_ROWS + 200_000) * DIMS * 5);
});
