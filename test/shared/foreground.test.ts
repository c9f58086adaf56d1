import { describe, expect, test } from "bun:test";
import { Foreground, MAX_RUN_MS, SYNC_SHARE } from "../../src/shared/foreground.ts";

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("foreground: background steps give way to requests", () => {
  test("with no request in flight a step goes on after one turn of the loop", async () => {
    const fg = new Foreground();
    let resumed = false;
    const step = fg.yieldTurn(60_000).then(() => (resumed = true));
    await turns(2);
    expect(resumed).toBe(true);
    await step;
  });

  test("a step waits while requests are in flight and goes on when the last one leaves", async () => {
    const fg = new Foreground();
    fg.enter();
    fg.enter();
    let resumed = false;
    const step = fg.yieldTurn(60_000).then(() => (resumed = true));
    await turns(5);
    expect(resumed).toBe(false);
    fg.leave();
    await turns(5);
    expect(resumed).toBe(false); // one request still in flight
    fg.leave();
    await step;
    expect(resumed).toBe(true);
    expect(fg.busy).toBe(false);
  });

  test("the last leave wakes a waiting step on the next turn, after what the request does as it ends; a request come in by then keeps it waiting", async () => {
    const fg = new Foreground();
    const order: string[] = [];
    fg.enter();
    const step = fg.yieldTurn(60_000).then(() => order.push("step"));
    await turns(2);
    // A handler's finally leaves, then its answer is written in the microtasks that follow.
    fg.leave();
    await Promise.resolve().then(() => order.push("answer"));
    await turns(1);
    expect(order).toEqual(["answer", "step"]);
    await step;

    fg.enter();
    let resumed = false;
    const waiting = fg.yieldTurn(60_000).then(() => (resumed = true));
    await turns(2);
    fg.leave();
    fg.enter(); // another request, before the wake's turn
    await turns(3);
    expect(resumed).toBe(false);
    fg.leave();
    await waiting;
    expect(resumed).toBe(true);
  });

  test("under requests that never end, a step still runs once its wait is over", async () => {
    const fg = new Foreground();
    fg.enter();
    // Resolves by the cap alone: nothing calls leave() before it.
    await fg.yieldTurn(1);
    await fg.yieldTurn(1);
    expect(fg.busy).toBe(true);
    fg.leave();
  });

  test("leave() more often than enter() does not leave a negative count behind", async () => {
    const fg = new Foreground();
    fg.leave();
    fg.enter();
    expect(fg.busy).toBe(true);
    fg.leave();
    expect(fg.busy).toBe(false);
  });
});

describe("foreground: sync work is foreground too", () => {
  test("a background step waits while sync work runs, and goes on when it ends", async () => {
    const fg = new Foreground();
    let finish!: () => void;
    const sync = fg.syncing(() => new Promise<void>((resolve) => (finish = resolve)));
    let resumed = false;
    const step = fg.yieldTurn(60_000).then(() => (resumed = true));
    await turns(5);
    expect(resumed).toBe(false);
    finish();
    await sync;
    await step;
    expect(resumed).toBe(true);
  });

  test("sync work and requests do not wait for each other: each step takes one turn", async () => {
    const fg = new Foreground(() => 0); // a turn that costs nothing earns nothing: every step takes one
    fg.enter(); // a request in flight the whole time
    const order: string[] = [];
    const sync = fg.syncing(async () => {
      for (let i = 0; i < 3; i++) {
        order.push(`sync ${i}`);
        await fg.turn();
      }
    });
    const request = (async () => {
      for (let i = 0; i < 3; i++) {
        order.push(`request ${i}`);
        await fg.turn();
      }
    })();
    await Promise.all([sync, request]);
    // Turn by turn, neither held off: a sync step never waited for the request to end.
    expect(order).toEqual(["sync 0", "request 0", "sync 1", "request 1", "sync 2", "request 2"]);
    expect(fg.busy).toBe(true);
    fg.leave();
    expect(fg.busy).toBe(false);
  });

  test("a failing sync job still ends its turn as foreground", async () => {
    const fg = new Foreground();
    await expect(fg.syncing(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(fg.busy).toBe(false);
  });
});

describe("foreground: sync's share of a busy loop", () => {
  /** A fake clock and "the others": work that runs once a turn of the loop, taking `othersMs` of the clock each time. */
  function busyLoop(othersMs: number) {
    const clock = { t: 0 };
    let others = 0;
    let running = true;
    const other = () => {
      if (!running) return;
      others++;
      clock.t += othersMs;
      setImmediate(other);
    };
    setImmediate(other);
    return { fg: new Foreground(() => clock.t), clock, turnsOfOthers: () => others, stop: () => (running = false) };
  }

  /** Sync steps of `stepMs` each, a `turn()` after each: how many turns of the others ran meanwhile. */
  async function syncSteps(loop: ReturnType<typeof busyLoop>, steps: number, stepMs: number): Promise<number> {
    await loop.fg.turn(); // the first turn earns the run that follows
    const before = loop.turnsOfOthers();
    for (let i = 0; i < steps; i++) {
      loop.clock.t += stepMs;
      await loop.fg.turn();
    }
    return loop.turnsOfOthers() - before;
  }

  test("after a turn in which the others ran 8 ms, 3-ms sync steps run on for their 8 ms before the next turn", async () => {
    expect(SYNC_SHARE).toBe(1);
    const loop = busyLoop(8);
    // Steps at 3, 6 ms go on; at 9 ms the share is used and the turn is taken; and so on: 3 turns for 9 steps.
    const turnsTaken = await syncSteps(loop, 9, 3);
    loop.stop();
    expect(turnsTaken).toBe(3);
  });

  test("sync never runs on for more than MAX_RUN_MS, however long the others held the loop", async () => {
    const loop = busyLoop(10 * MAX_RUN_MS);
    const stepMs = MAX_RUN_MS / 4;
    // Each run ends at MAX_RUN_MS: a turn every fourth step.
    const turnsTaken = await syncSteps(loop, 12, stepMs);
    loop.stop();
    expect(turnsTaken).toBe(3);
  });

  test("on an idle loop every step takes its turn", async () => {
    const loop = busyLoop(0);
    expect(await syncSteps(loop, 5, 2)).toBe(5);
    loop.stop();
  });
});
