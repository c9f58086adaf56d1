// The cdc consumer merges the change batches already waiting into one apply (cdc.ts `coalesced`):
// keys deduplicated, the last checkpoint, the first commit time; never waits for a batch not yet
// there, and stops merging at a batch that says every row changed.
import { describe, expect, test } from "bun:test";
import { coalesced } from "../../../src/domains/sync/cdc.ts";
import type { ChangeBatch } from "../../../src/drivers/sources/types.ts";

const batch = (n: number, keys: number[], allRowsChanged = false): ChangeBatch => ({ checkpoint: `0/${n}`, keys: keys.map((k) => [k]), allRowsChanged, committedAt: new Date(1000 * n) });

/** A stream that hands out what was pushed, and waits (like a feed) when nothing is queued. */
function feed() {
  const queue: ChangeBatch[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  const stream: AsyncIterable<ChangeBatch> = {
    [Symbol.asyncIterator]: () => ({
      async next() {
        for (;;) {
          const b = queue.shift();
          if (b) return { value: b, done: false };
          if (ended) return { value: undefined, done: true };
          await new Promise<void>((r) => (wake = r));
        }
      },
    }),
  };
  return {
    stream,
    push: (...b: ChangeBatch[]) => (queue.push(...b), wake?.()),
    end: () => ((ended = true), wake?.()),
  };
}

describe("happy", () => {
  test("batches already queued merge into one: keys deduplicated, last checkpoint, first commit time", async () => {
    const f = feed();
    f.push(batch(1, [1, 2]), batch(2, [2, 3]), batch(3, [4]));
    f.end();
    const out: ChangeBatch[] = [];
    for await (const b of coalesced(f.stream)) out.push(b);
    expect(out).toEqual([{ checkpoint: "0/3", keys: [[1], [2], [3], [4]], allRowsChanged: false, committedAt: new Date(1000) }]);
  });

  test("a batch not yet there is not waited for; it comes as the next apply", async () => {
    const f = feed();
    f.push(batch(1, [1]));
    const it = coalesced(f.stream)[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ checkpoint: "0/1", keys: [[1]] });
    f.push(batch(2, [2]));
    expect((await it.next()).value).toMatchObject({ checkpoint: "0/2", keys: [[2]] });
    f.end();
    expect((await it.next()).done).toBe(true);
  });

  test("merging stops at a batch that changed every row, and at the key limit", async () => {
    const f = feed();
    f.push(batch(1, [1]), batch(2, [], true), batch(3, [3]), batch(4, [4]), batch(5, [5]));
    f.end();
    const out: ChangeBatch[] = [];
    for await (const b of coalesced(f.stream, 2)) out.push(b);
    expect(out.map((b) => [b.checkpoint, b.allRowsChanged, b.keys.length])).toEqual([["0/2", true, 1], ["0/4", false, 2], ["0/5", false, 1]]);
  });
});
