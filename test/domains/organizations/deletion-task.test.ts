// DELETE /v1/organizations/{id} end to end through the running scheduler (docs/api.md#organizations).
import { describe, expect, test } from "bun:test";
import { createTestApp, eventually } from "../../harness.ts";
import { json, newOrganization } from "../../helpers/organizations.ts";

describe("happy", () => {
  test("the org_deletion task runs by itself, completes, and the organization then answers 404", async () => {
    await using app = await createTestApp();
    app.services.scheduler.start();
    const org = await newOrganization(app);
    const other = await newOrganization(app);
    const res = await app.request("DELETE", `/v1/organizations/${org.id}`, { headers: org.owner.jwt });
    expect(res.status).toBe(202);
    const { task_id } = await json(res);

    await eventually(async () => (await app.request("GET", `/v1/organizations/${org.id}`, { headers: org.owner.jwt })).status === 404, 10_000);
    const [task] = (await app.services.database.client.execute({ sql: "SELECT status, attempts FROM tasks WHERE id = ?", args: [task_id] })).rows;
    expect(task).toMatchObject({ status: "completed", attempts: 1 });
    const left = await app.services.database.client.execute({ sql: "SELECT count(*) AS n FROM environments WHERE org_id = ?", args: [org.id] });
    expect(left.rows[0]!.n).toBe(0);

    // The other organization is untouched.
    expect((await app.request("GET", `/v1/organizations/${other.id}`, { headers: other.owner.jwt })).status).toBe(200);
    expect((await app.request("GET", "/v1/environments", { headers: other.owner.key })).status).toBe(200);
  });
});
