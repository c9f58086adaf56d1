// CONTRACT 8 under kills: a re-backfill whose process is killed three runs in a row before any
// of them could checkpoint fails for good and turns its table `error`, while queries keep being
// answered from the vectors served before; `POST …/backfill` then builds the new configuration
// and every row is found again. The seeded harness meets this by chance (kill_in_startup after a
// PUT, bench faults seed 291); here a provider too slow for any page to finish makes it certain.
import { afterAll, expect, test } from "bun:test";
import { must } from "../e2e/helpers.ts";
import { eventually } from "../harness.ts";
import { checkServed, GIVEN_UP_BY_KILLS, resumeIfGivenUpByKills, waitCaughtUp } from "./checker.ts";
import { MODELS } from "./schedule.ts";
import { disposeAllWorlds, FaultWorld } from "./world.ts";

const CATCH_UP_MS = 30_000;

afterAll(() => disposeAllWorlds());

type Task = { task_type: string; status: string; attempts: number; last_error: string | null };

test("a re-backfill killed before its first checkpoint, three runs in a row: error, old vectors served; POST backfill builds it", async () => {
  await using world = await FaultWorld.open(300);
  expect(await world.start()).toMatchObject({ ok: true });
  await world.provision();
  const api = () => world.api;
  const table = () => `/v1/vector-tables/${world.tableId}`;
  must(await api().call("POST", `${table()}/backfill`), 200);
  expect(await waitCaughtUp(api(), world.tableId, Date.now(), CATCH_UP_MS)).toEqual([]);

  // Every embedding call now outlasts a run: no page is stored, no checkpoint saved.
  world.fake.switches.latencyMs = 120_000;
  must(await api().call("PUT", table(), MODELS[1]), 200);
  const rebackfill = async () => (must(await api().call("GET", `/v1/tasks?target_id=${world.tableId}`), 200).data as Task[]).find((t) => t.task_type === "rebackfill");
  for (let attempt = 1; attempt <= 3; attempt++) {
    await eventually(async () => {
      const t = await rebackfill();
      return t?.status === "running" && t.attempts === attempt && t;
    }, 20_000, 50);
    await world.stop("SIGKILL");
    expect(await world.start()).toMatchObject({ ok: true });
  }
  // The claim after the third run fails the task without running it, and the table with it.
  const failed = await eventually(async () => {
    const t = await rebackfill();
    return t?.status === "failed" && t;
  }, 20_000, 50);
  expect(failed.last_error).toMatch(GIVEN_UP_BY_KILLS);
  const errored = must(await api().call("GET", table()), 200);
  expect(errored.sync_status).toBe("error");
  expect(must(await api().call("GET", `${table()}/sync/status`), 200).last_error).toMatch(GIVEN_UP_BY_KILLS);

  // Meanwhile queries answer from the model served before (32 dimensions), every row found.
  world.fake.switches.latencyMs = 0;
  const before = await checkServed(api(), world.pg.sql, world.tableId);
  expect(before.findings).toEqual([]);
  expect(before.rowsChecked).toBeGreaterThan(0);

  expect(await resumeIfGivenUpByKills(api(), world.tableId)).toMatch(/rebackfill given up after \d+ runs killed before a checkpoint/);
  expect(await waitCaughtUp(api(), world.tableId, Date.now(), CATCH_UP_MS)).toEqual([]);
  const after = must(await api().call("GET", table()), 200);
  expect([after.sync_status, after.embedding_dimensions]).toEqual(["synced", 48]);
  expect((await checkServed(api(), world.pg.sql, world.tableId)).findings).toEqual([]);
}, 90_000);
