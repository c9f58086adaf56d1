import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey } from "../../helpers/organizations.ts";
import { json, seedTask } from "./helpers.ts";

const rpcGet = (taskId: string) => `/trpc/tasks.get?input=${encodeURIComponent(JSON.stringify({ task_id: taskId }))}`;

describe("happy", () => {
  test("returns the task, even one finished long ago", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const org = await newOrganization(app);
    const task = await seedTask(app, org.id, { status: "failed", lastError: "provider answered 401", progress: { last_processed_pk: "7", rows_processed: 7 } });
    clock.advance(72 * 60 * 60 * 1000);
    const res = await app.request("GET", `/v1/tasks/${task.id}`, { headers: org.owner.key });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      id: task.id,
      org_id: org.id,
      task_type: "backfill",
      target_id: "vt_target",
      status: "failed",
      priority: 3,
      progress: { last_processed_pk: "7", rows_processed: 7 },
      attempts: 1,
      max_attempts: 3,
      last_error: "provider answered 401",
      created_at: task.createdAt,
    });
  });

  test("the same task over tRPC", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const task = await seedTask(app, org.id);
    const res = await app.request("GET", rpcGet(task.id), { headers: org.owner.key });
    expect(res.status).toBe(200);
    expect((await json(res)).result.data).toMatchObject({ id: task.id, status: "pending", progress: { last_processed_pk: null, rows_processed: 0 } });
  });
});

describe("errors", () => {
  test("an unknown id is 404 not_found, on REST and tRPC", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const res = await app.request("GET", "/v1/tasks/0000000000000000000000000z", { headers: org.owner.key });
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe("not_found");
    const rpc = await app.request("GET", rpcGet("0000000000000000000000000z"), { headers: org.owner.key });
    expect(rpc.status).toBe(404);
    expect((await json(rpc)).error.data.vecsync.code).toBe("not_found");
  });

  test("a JWT instead of a key is 401", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const task = await seedTask(app, org.id);
    expect((await app.request("GET", `/v1/tasks/${task.id}`, { headers: org.owner.jwt })).status).toBe(401);
  });
});

describe("authz", () => {
  test("another organization's task is 404, never 403; a read-only key reads its own", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const other = await newOrganization(app);
    const theirs = await seedTask(app, other.id);
    for (const path of [`/v1/tasks/${theirs.id}`, rpcGet(theirs.id)]) {
      const res = await app.request("GET", path, { headers: org.owner.key });
      expect(res.status).toBe(404);
    }
    const ro = await readOnlyKey(app, other.owner);
    expect((await app.request("GET", `/v1/tasks/${theirs.id}`, { headers: ro })).status).toBe(200);
  });
});
