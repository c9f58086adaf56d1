import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, type TestOrg, json } from "../../helpers/organizations.ts";
import { addDependent } from "../../helpers/dependents.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
  // A stand-in for a later domain (connections, vector tables): environments named `busy-*` hold one.
  addDependent(app.services, "environment", {
    resource: "test-widgets",
    count: async (orgId, environmentId) => {
      const res = await app.services.database.client.execute({ sql: "SELECT name FROM environments WHERE org_id = ? AND id = ?", args: [orgId, environmentId] });
      return String(res.rows[0]?.name ?? "").startsWith("busy-") ? 1 : 0;
    },
  });
});
afterAll(() => app[Symbol.asyncDispose]());

const createEnv = async (org: TestOrg, name: string) => (await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name } }))) as { id: string };
const prodOf = async (org: TestOrg) => ((await json(await app.request("GET", "/v1/environments", { headers: org.owner.key }))).data as { id: string; name: string }[]).find((e) => e.name === "prod")!;

describe("happy", () => {
  test("GET answers the environment", async () => {
    const org = await newOrganization(app);
    const env = await createEnv(org, "staging");
    const res = await app.request("GET", `/v1/environments/${env.id}`, { headers: org.owner.key });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ id: env.id, org_id: org.id, name: "staging", created_at: expect.any(String) });
  });

  test("DELETE 204; then 404; the name can be used again", async () => {
    const org = await newOrganization(app);
    const env = await createEnv(org, "temp");
    const res = await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key });
    expect(res.status).toBe(204);
    expect((await app.request("GET", `/v1/environments/${env.id}`, { headers: org.owner.key })).status).toBe(404);
    expect((await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "temp" } })).status).toBe(201);
  });
});

describe("errors", () => {
  test("409 environment_protected for prod", async () => {
    const org = await newOrganization(app);
    const prod = await prodOf(org);
    const res = await app.request("DELETE", `/v1/environments/${prod.id}`, { headers: org.owner.key });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("environment_protected");
  });

  test("409 in_use while a registered usage check reports resources", async () => {
    const org = await newOrganization(app);
    const env = await createEnv(org, "busy-one");
    const res = await app.request("DELETE", `/v1/environments/${env.id}`, { headers: org.owner.key });
    expect(res.status).toBe(409);
    const body = await json(res);
    expect(body.error.code).toBe("in_use");
    expect(body.error.details).toEqual({ attached: ["test-widgets"] });
    expect((await app.request("GET", `/v1/environments/${env.id}`, { headers: org.owner.key })).status).toBe(200);
  });

  test("404 for an unknown id on GET and DELETE", async () => {
    const org = await newOrganization(app);
    for (const method of ["GET", "DELETE"]) expect((await app.request(method, "/v1/environments/nosuchenv00000000000000", { headers: org.owner.key })).status).toBe(404);
  });
});

describe("authz", () => {
  test("404 for another organization's environment", async () => {
    const a = await newOrganization(app);
    const b = await newOrganization(app);
    const env = await createEnv(a, "private");
    for (const method of ["GET", "DELETE"]) expect((await app.request(method, `/v1/environments/${env.id}`, { headers: b.owner.key })).status).toBe(404);
  });

  test("read_only key: GET 200, DELETE 403", async () => {
    const org = await newOrganization(app);
    const env = await createEnv(org, "ro-target");
    const ro = await readOnlyKey(app, org.owner);
    expect((await app.request("GET", `/v1/environments/${env.id}`, { headers: ro })).status).toBe(200);
    const res = await app.request("DELETE", `/v1/environments/${env.id}`, { headers: ro });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
  });
});
