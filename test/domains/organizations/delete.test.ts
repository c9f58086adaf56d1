import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createTestApp, type TestApp } from "../../harness.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import { deleteOrganizationData } from "../../../src/domains/organizations/deletion.ts";
import { addMember, newOrganization, json } from "../../helpers/organizations.ts";
import { addDependent } from "../../helpers/dependents.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const count = async (table: string, orgId: string) =>
  Number((await app.services.database.client.execute({ sql: `SELECT count(*) AS n FROM ${table} WHERE org_id = ?`, args: [orgId] })).rows[0]!.n);

describe("happy", () => {
  test("202 deleting + task; keys stop working at once; the org_deletion task is queued at priority 7", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    const res = await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body).toEqual({ organization_id: org.id, status: "deleting", task_id: expect.any(String) });

    for (const key of [org.owner.key, member.key]) expect((await app.request("GET", "/v1/api-keys", { headers: key })).status).toBe(401);
    const [task] = await app.services.database.db.select().from(tasks).where(eq(tasks.id, body.task_id));
    expect(task).toMatchObject({ orgId: org.id, taskType: "org_deletion", targetId: org.id, status: "pending", priority: 7, maxAttempts: 5 });

    const got = await json(await app.request("GET", `/v1/organizations/${org.id}`, { headers: org.owner.jwt }));
    expect(got.status).toBe("deleting");
  });

  test("the deletion handler removes every record, keeps the running task, and is idempotent", async () => {
    const org = await newOrganization(app);
    await addMember(app, org, "admin");
    await app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt, body: { email: "later@example.com", role: "member" } });
    const { task_id } = await json(await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt }));

    await deleteOrganizationData(app.services, org.id, { runningTaskId: task_id });
    await deleteOrganizationData(app.services, org.id, { runningTaskId: task_id }); // a retry finds nothing left to do
    for (const table of ["members", "invitations", "api_keys", "environments"]) expect(await count(table, org.id)).toBe(0);
    expect(await count("tasks", org.id)).toBe(1);
    expect((await app.request("GET", `/v1/organizations/${org.id}`, { headers: org.owner.jwt })).status).toBe(404);
    // The name is free again.
    expect((await app.request("POST", "/v1/organizations", { headers: org.owner.jwt, body: { name: org.name } })).status).toBe(201);
  });

  test("registered cleaners run: external resources before records", async () => {
    const order: string[] = [];
    addDependent(app.services, "organization", {
      name: "test-cleaner",
      external: async (orgId) => void order.push(`external:${orgId}`),
      records: async (_, orgId) => void order.push(`records:${orgId}`),
    });
    const org = await newOrganization(app);
    await deleteOrganizationData(app.services, org.id);
    expect(order).toEqual([`external:${org.id}`, `records:${org.id}`]);
  });

  test("a failing external cleaner leaves the records in place for the retry", async () => {
    const org = await newOrganization(app);
    addDependent(app.services, "organization", {
      name: "failing-cleaner",
      external: async (orgId) => {
        if (orgId === org.id) throw new Error("vector store unavailable");
      },
    });
    await expect(deleteOrganizationData(app.services, org.id)).rejects.toThrow("vector store unavailable");
    expect(await count("members", org.id)).toBe(1);
  });
});

describe("errors", () => {
  test("409 organization_deleting on a second delete", async () => {
    const org = await newOrganization(app);
    expect((await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt })).status).toBe(202);
    const res = await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("organization_deleting");
  });

  test("409 organization_deleting on changes to a deleting organization", async () => {
    const org = await newOrganization(app);
    const member = await addMember(app, org, "member");
    await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt });
    const invite = await app.request("POST", `/v1/organizations/${org.id}/invitations`, { headers: org.owner.jwt, body: { email: "x@example.com", role: "member" } });
    expect((await json(invite)).error.code).toBe("organization_deleting");
    const leave = await app.request("POST", `/v1/organizations/${org.id}/leave`, { headers: member.jwt });
    expect(leave.status).toBe(409);
  });
});

describe("authz", () => {
  test.each(["admin", "member"] as const)("403 insufficient_role for an %s", async (role) => {
    const org = await newOrganization(app);
    const who = await addMember(app, org, role);
    const res = await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: who.jwt });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_role");
  });
});
