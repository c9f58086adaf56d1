// The rest between background steps (pace.ts Pacer.pauser): at most its share of the loop while
// writes go on, and over once they pause, on a fake clock.
import { describe, expect, test } from "bun:test";
import type { Pacer, Rest } from "../../../../src/drivers/vector-store/pace.ts";
import { FakeStoreClock, pacerOn } from "./fake-time.ts";

const REST: Rest = { share: 0.1, quietMs: 500 };

/**
 * Runs `pause` and says when it ended on the fake clock, moving the clock 50 ms at a time; after
 * each move the pacer is told of a write while `writing(now)` says so.
 */
async function endOf(clock: FakeStoreClock, pacer: Pacer, pause: () => Promise<void>, writing: (at: number) => boolean): Promise<number> {
  let ended = -1;
  void pause().then(() => (ended = clock.now()));
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  for (let i = 0; i < 4; i++) await turn();
  while (ended < 0 && clock.now() < 100_000) {
    await clock.advance(50);
    for (let i = 0; i < 4; i++) await turn();
    if (ended < 0 && writing(clock.now())) pacer.noteWrite();
  }
  return ended;
}

describe("happy", () => {
  test("while writes go on, a 200 ms step rests 1.8 s: the step is a tenth of the loop", async () => {
    const clock = new FakeStoreClock();
    const pacer = pacerOn(clock);
    pacer.noteWrite();
    const pause = pacer.pauser(REST);
    await clock.advance(200); // the step
    expect(await endOf(clock, pacer, pause, () => true)).toBe(200 + 1_800);
  });

  test("when the writes stop, the rest ends 2 s after the last (4 × 500 ms), not after the whole share", async () => {
    const clock = new FakeStoreClock();
    const pacer = pacerOn(clock);
    pacer.noteWrite();
    const pause = pacer.pauser(REST);
    await clock.advance(2_000); // a step that waited on a busy loop and thread: a rest of 18 s
    pacer.noteWrite(); // the last write, at 2,000
    expect(await endOf(clock, pacer, pause, (at) => at <= 2_300)).toBe(2_300 + 2_000);
  });

  test("with no write within 500 ms, no rest", async () => {
    const clock = new FakeStoreClock();
    const pacer = pacerOn(clock);
    pacer.noteWrite();
    const pause = pacer.pauser(REST);
    await clock.advance(600);
    expect(await endOf(clock, pacer, pause, () => false)).toBe(600);
  });
});
