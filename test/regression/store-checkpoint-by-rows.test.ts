// Regression (issue 12, item 9): index checkpoints happened only at a clean shutdown, so after a
// kill -9 (or any process that did not live to close) a restart rebuilt or replayed every row
// written since: 27,000 rows took 10-11 s instead of 2-3 s. The store now checkpoints every
// CHECKPOINT_ROWS rows written, so a restart replays at most CHECKPOINT_ROWS + one batch − 1, and
// the rows written while the last checkpoint's file was made durable: a quarter of CHECKPOINT_ROWS
// at most (restart.ts rowsBesideCheckpoint). This writer never lets the event loop turn, so it
// writes that many before the checkpoint can end.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { makeWorld } from "../drivers/vector-store/helpers.ts";
import { killWriterAtPage } from "./fixtures/backfill-kill.ts";

setDefaultTimeout(120_000);

/** restart.ts CHECKPOINT_ROWS, stated here so the test reads (and fails) on its own. */
const CHECKPOINT_ROWS = 8_192;

describe("happy", () => {
  test("SIGKILL after 20,000 rows and no explicit checkpoint: the restart loads a checkpoint and replays fewer than 1.25 × CHECKPOINT_ROWS + 100 rows", async () => {
    await using w = await makeWorld();
    const seen = await killWriterAtPage(w.dbUrl, w.indexDir, { total: 30_000, checkpointAt: -1, killAfter: 20_000 });
    const events: [string, Record<string, unknown>][] = [];
    const store = await w.open({ log: (e, f) => events.push([e, f]) });
    await store.whenReady("vt_kill");
    expect(events.filter(([e]) => e === "vector_store.index_rebuild")).toEqual([]);
    const loaded = events.find(([e]) => e === "vector_store.index_loaded")?.[1];
    expect(loaded?.rows).toBeGreaterThanOrEqual(seen);
    expect(Number(loaded?.replayed)).toBeLessThan(1.25 * CHECKPOINT_ROWS + 100);
  });
});
