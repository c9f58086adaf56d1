// The X-Environment-Id guard (docs/api.md#environments) that connections, providers and vector tables call.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolveEnvironment } from "../../../src/domains/environments/service.ts";
import type { KeyActor } from "../../../src/shared/actor.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, type TestOrg, json } from "../../helpers/organizations.ts";

let app: TestApp;
let org: TestOrg;
let actor: KeyActor;
beforeAll(async () => {
  app = await createTestApp();
  org = await newOrganization(app);
  actor = (await app.services.authenticator.resolve("api_key", org.owner.apiKey)) as KeyActor;
});
afterAll(() => app[Symbol.asyncDispose]());

describe("happy", () => {
  test.each([undefined, null, "", "  "])("absent header (%p) → the organization's prod environment", async (header) => {
    const env = await resolveEnvironment(app.services, actor, header);
    expect(env).toMatchObject({ orgId: org.id, name: "prod" });
  });

  test("a header naming one of the organization's environments → that environment", async () => {
    const created = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
    const env = await resolveEnvironment(app.services, actor, created.id);
    expect(env).toMatchObject({ id: created.id, name: "staging" });
  });
});

describe("errors", () => {
  test("404 for an unknown id", async () => {
    const err = await resolveEnvironment(app.services, actor, "nosuchenvironment0000000").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("not_found");
  });
});

describe("authz", () => {
  test("404 for another organization's environment", async () => {
    const other = await newOrganization(app);
    const foreign = await json(await app.request("POST", "/v1/environments", { headers: other.owner.key, body: { name: "theirs" } }));
    const err = await resolveEnvironment(app.services, actor, foreign.id).catch((e: unknown) => e);
    expect((err as AppError).status).toBe(404);
  });
});
