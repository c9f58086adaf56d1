// DELETE /v1/vector-tables/{id} (record, collection, tasks), the in_use guards it lifts from its
// environment, connection and provider, and organization deletion's clean-up of vector tables.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { deleteOrganizationData } from "../../../src/domains/organizations/deletion.ts";
import { type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type TestOrg } from "../../helpers/organizations.ts";
import { docRows, localProvider, newTable, seedCollection, sourceConnection, tableBody, tasksOf, type Fixture, useTableWorld } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let app: TestApp, pg: ThrowawayDatabase, org: TestOrg, f: Fixture;
useTableWorld({}, (w) => ({ app, pg, org, f } = w));

const del = (path: string, key = org.owner.key) => app.request("DELETE", path, { headers: key });
const code = async (res: Response) => [res.status, res.status === 204 ? null : (await json(res)).error.code];

describe("happy", () => {
  test("204: the record, its collection and its unfinished tasks go; the task history says why", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await seedCollection(app, org, t, docRows().slice(0, 5));
    expect((await app.request("POST", `/v1/vector-tables/${t.id}/backfill`, { headers: org.owner.key })).status).toBe(200);
    expect(await code(await del(`/v1/vector-tables/${t.id}`))).toEqual([204, null]);
    expect((await app.request("GET", `/v1/vector-tables/${t.id}`, { headers: org.owner.key })).status).toBe(404);
    expect(app.services.vectors.hasCollection(t.vectorstore_collection)).toBe(false);
    const tasks = await tasksOf(app, org.id, t.id);
    expect(tasks.map((x) => [x.taskType, x.status, x.lastError])).toEqual([["backfill", "failed", "vector table deleted"]]);
    expect(await code(await del(`/v1/vector-tables/${t.id}`))).toEqual([404, "not_found"]);
  });

  test("environment, connection and provider answer 409 in_use while a vector table uses them, and delete after", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "scratch" } }));
    const g = { connectionId: await sourceConnection(app, org.owner.key, pg, { environmentId: env.id }), providerId: await localProvider(app, org.owner.key, { environmentId: env.id }) };
    const t = await newTable(app, org.owner.key, tableBody(g), env.id);
    for (const path of [`/v1/connections/${g.connectionId}`, `/v1/embedding-providers/${g.providerId}`]) {
      const res = await del(path);
      const body = await json(res);
      expect([res.status, body.error.code, body.error.details.used_by]).toEqual([409, "in_use", ["vector tables"]]);
    }
    const envRes = await del(`/v1/environments/${env.id}`);
    expect([envRes.status, (await json(envRes)).error.details.attached]).toEqual([409, expect.arrayContaining(["vector tables"])]);
    expect(await code(await del(`/v1/vector-tables/${t.id}`))).toEqual([204, null]);
    expect(await code(await del(`/v1/connections/${g.connectionId}`))).toEqual([204, null]);
    expect(await code(await del(`/v1/embedding-providers/${g.providerId}`))).toEqual([204, null]);
    expect(await code(await del(`/v1/environments/${env.id}`))).toEqual([204, null]);
  });

  test("tRPC vectorTables.delete", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect((await app.request("POST", "/trpc/vectorTables.delete", { headers: org.owner.key, body: { vector_table_id: t.id } })).status).toBe(200);
    expect(app.services.vectors.hasCollection(t.vectorstore_collection)).toBe(false);
  });

  test("organization deletion drops every collection of the organization and its vector tables", async () => {
    const other = await newOrganization(app);
    const g = { connectionId: await sourceConnection(app, other.owner.key, pg), providerId: await localProvider(app, other.owner.key) };
    const t1 = await newTable(app, other.owner.key, tableBody(g));
    const t2 = await newTable(app, other.owner.key, tableBody(g));
    const mine = await newTable(app, org.owner.key, tableBody(f));
    await deleteOrganizationData(app.services, other.id);
    expect(app.services.vectors.hasCollection(t1.vectorstore_collection)).toBe(false);
    expect(app.services.vectors.hasCollection(t2.vectorstore_collection)).toBe(false);
    expect(app.services.vectors.hasCollection(mine.vectorstore_collection)).toBe(true);
    // Idempotent: a retried deletion finds nothing left to do.
    await deleteOrganizationData(app.services, other.id);
  });
});

describe("authz", () => {
  test("a read_only key → 403; another organization → 404; nothing deleted", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect(await code(await del(`/v1/vector-tables/${t.id}`, await readOnlyKey(app, org.owner)))).toEqual([403, "insufficient_permission"]);
    const other = await newOrganization(app);
    expect(await code(await del(`/v1/vector-tables/${t.id}`, other.owner.key))).toEqual([404, "not_found"]);
    expect(app.services.vectors.hasCollection(t.vectorstore_collection)).toBe(true);
  });
});
