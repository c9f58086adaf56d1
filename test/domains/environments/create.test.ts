import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json } from "../../helpers/organizations.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app[Symbol.asyncDispose]());

const create = (headers: { authorization: string }, body: unknown) => app.request("POST", "/v1/environments", { headers, body });

describe("happy", () => {
  test.each(["staging", "dev-2", "qa_eu", "a", "x".repeat(50)])("201 for the name %s", async (name) => {
    const org = await newOrganization(app);
    const res = await create(org.owner.key, { name });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ id: expect.stringMatching(/^[0-9a-z]{26}$/), org_id: org.id, name, created_at: expect.any(String) });
  });

  test("the same name in two organizations is fine", async () => {
    const a = await newOrganization(app);
    const b = await newOrganization(app);
    expect((await create(a.owner.key, { name: "shared" })).status).toBe(201);
    expect((await create(b.owner.key, { name: "shared" })).status).toBe(201);
  });
});

describe("errors", () => {
  test("409 name_taken for a duplicate, including prod", async () => {
    const org = await newOrganization(app);
    await create(org.owner.key, { name: "staging" });
    for (const name of ["staging", "prod"]) {
      const res = await create(org.owner.key, { name });
      expect(res.status).toBe(409);
      expect((await json(res)).error.code).toBe("name_taken");
    }
  });

  test.each(["", "Upper", "has space", "dot.ted", "x".repeat(51), "émoji"])("400 validation_error for the name %p", async (name) => {
    const org = await newOrganization(app);
    const res = await create(org.owner.key, { name });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe("validation_error");
    expect(body.error.details[0].path).toBe("name");
  });
});

describe("authz", () => {
  test("403 for a read_only key, 401 for a JWT", async () => {
    const org = await newOrganization(app);
    const ro = await readOnlyKey(app, org.owner);
    const res = await create(ro, { name: "nope" });
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe("insufficient_permission");
    expect((await create(org.owner.jwt, { name: "nope" })).status).toBe(401);
  });
});
