// Regression: the claim's "runnable" condition, `(pending and due) OR (running and lease expired)`,
// went into drizzle's and() unparenthesised, so its OR escaped the AND. One claim then took every
// running task whose lease had expired, of any type, though it ran only one: the others sat
// under a fresh lease of a worker that would never run them, each charged an attempt and a run
// without progress. After a crash with several tasks running, a restart resumed one at once and
// left the rest for another lease.
import { describe, expect, test } from "bun:test";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import { claimNext } from "../../src/scheduler/queue.ts";
import { DELETION, FILL, queueWorld, taskRow } from "../scheduler/helpers.ts";

const T0 = Date.UTC(2026, 0, 1);

describe("happy", () => {
  test("a claim takes one task whose lease expired, of its own types, and leaves the others to their holders", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const ids: string[] = [];
    for (const [i, kind] of [FILL, FILL, DELETION].entries()) ids.push((await enqueue(db, kind, { orgId: "org1", targetId: `t${i}`, payload: { n: i }, now: new Date(T0) })).id);
    for (const i of ids.keys()) await claimNext(db, { workerId: `dead-${i}`, types: ["backfill", "org_deletion"], now: new Date(T0), leaseMs: 1_000 });

    const claimed = await claimNext(db, { workerId: "fresh", types: ["backfill"], now: new Date(T0 + 5_000), leaseMs: 1_000 });
    expect(claimed?.id).toBe(ids[0]);
    for (const [i, id] of ids.entries()) {
      const row = await taskRow(world.database, id);
      expect(row).toMatchObject(i === 0 ? { lockedBy: "fresh", attempts: 2 } : { lockedBy: `dead-${i}`, attempts: 1 });
    }
  });
});
