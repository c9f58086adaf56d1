import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createTestApp } from "../../harness.ts";
import { bearer, newOrganization, readOnlyKey } from "../../helpers/organizations.ts";
import { json, seedTask } from "./helpers.ts";

const HOUR = 60 * 60 * 1000;

describe("happy", () => {
  test("lists active tasks and those finished in the last 24 hours, newest first", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const org = await newOrganization(app);
    const oldDone = await seedTask(app, org.id, { status: "completed" }); // finished 25 h before the list
    clock.advance(HOUR);
    const oldPending = await seedTask(app, org.id, { status: "pending" }); // old, but still active
    clock.advance(24 * HOUR);
    const failed = await seedTask(app, org.id, { status: "failed", lastError: "source unreachable" });
    clock.advance(1_000);
    const running = await seedTask(app, org.id, { taskType: "rebackfill", status: "running", progress: { last_processed_pk: "41", rows_processed: 41 } });

    const res = await app.request("GET", "/v1/tasks", { headers: org.owner.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.data.map((t: { id: string }) => t.id)).toEqual([running.id, failed.id, oldPending.id]);
    expect(body.data.map((t: { id: string }) => t.id)).not.toContain(oldDone.id);
    expect(body.data[0]).toEqual({
      id: running.id,
      org_id: org.id,
      task_type: "rebackfill",
      target_id: "vt_target",
      status: "running",
      priority: 3,
      progress: { last_processed_pk: "41", rows_processed: 41 },
      attempts: 1,
      max_attempts: 3,
      last_error: null,
      created_at: running.createdAt,
    });
    expect(body.data[1]).toMatchObject({ status: "failed", last_error: "source unreachable" });
  });

  test("filters by status, task_type and target_id", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const a = await seedTask(app, org.id, { taskType: "backfill", targetId: "vt_a", status: "running" });
    const b = await seedTask(app, org.id, { taskType: "rebackfill", targetId: "vt_b", status: "pending" });
    const c = await seedTask(app, org.id, { taskType: "backfill", targetId: "vt_b", status: "completed" });
    const ids = async (query: string) => ((await json(await app.request("GET", `/v1/tasks?${query}`, { headers: org.owner.key }))).data as { id: string }[]).map((t) => t.id).sort();
    expect(await ids("status=running")).toEqual([a.id]);
    expect(await ids("task_type=backfill")).toEqual([a.id, c.id].sort());
    expect(await ids("target_id=vt_b")).toEqual([b.id, c.id].sort());
    expect(await ids("target_id=vt_b&status=completed")).toEqual([c.id]);
    expect(await ids("task_type=org_deletion")).toEqual([]);
  });

  test("the organization's deletion task is listed too", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const task = await seedTask(app, org.id, { taskType: "org_deletion", targetId: org.id });
    const body = await json(await app.request("GET", `/v1/tasks?task_type=org_deletion`, { headers: org.owner.key }));
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ id: task.id, target_id: org.id, priority: 7, max_attempts: 5 });
  });

  test("the same list over tRPC", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const task = await seedTask(app, org.id);
    const res = await app.request("GET", `/trpc/tasks.list?input=${encodeURIComponent(JSON.stringify({ status: "pending" }))}`, { headers: org.owner.key });
    expect(res.status).toBe(200);
    expect((await json(res)).result.data.data.map((t: { id: string }) => t.id)).toEqual([task.id]);
    const all = await app.request("GET", `/trpc/tasks.list`, { headers: org.owner.key });
    expect((await json(all)).result.data.data).toHaveLength(1);
  });
});

describe("errors", () => {
  test.each([
    ["an unknown status", "status=done"],
    ["an unknown task type", "task_type=sync"],
    ["an unknown parameter", "limit=5"],
  ])("%s is 400 validation_error", async (_, query) => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const res = await app.request("GET", `/v1/tasks?${query}`, { headers: org.owner.key });
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });

  test("no credential, or a JWT instead of a key, is 401", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    for (const headers of [{}, org.owner.jwt, bearer("vs_not_a_key")]) {
      const res = await app.request("GET", "/v1/tasks", { headers });
      expect(res.status).toBe(401);
      expect((await json(res)).error.code).toBe("unauthorized");
    }
  });
});

describe("authz", () => {
  test("a read-only key may list; another organization's tasks never appear", async () => {
    await using app = await createTestApp();
    const org = await newOrganization(app);
    const other = await newOrganization(app);
    const mine = await seedTask(app, org.id);
    await seedTask(app, other.id);
    const ro = await readOnlyKey(app, org.owner);
    const res = await app.request("GET", "/v1/tasks", { headers: ro });
    expect(res.status).toBe(200);
    expect((await json(res)).data.map((t: { id: string }) => t.id)).toEqual([mine.id]);
  });
});
