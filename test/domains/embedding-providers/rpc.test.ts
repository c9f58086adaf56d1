// The tRPC router calls the same service functions: same objects, same errors, same header.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";

let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  app = await createTestApp();
  org = await newOrganization(app);
});
afterAll(() => app[Symbol.asyncDispose]());

const mutation = (name: string, input: unknown, headers: Record<string, string> = org.owner.key) => app.request("POST", `/trpc/embeddingProviders.${name}`, { headers, body: input });
const query = (name: string, input: unknown, headers: Record<string, string> = org.owner.key) =>
  app.request("GET", `/trpc/embeddingProviders.${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
const result = async (res: Response) => (await json(res)).result.data;
const failure = async (res: Response) => ({ status: res.status, code: (await json(res)).error.data.vecsync.code });

describe("happy", () => {
  test("create (with X-Environment-Id), get, update, list, models, delete", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "rpc-env" } }));
    const created = await result(await mutation("create", { name: "rpc-1", provider: "emb_c", api_key: "pa-abcdefgh", default_model: "emb_c-3.5" }, { ...org.owner.key, "x-environment-id": env.id }));
    expect(created).toMatchObject({ name: "rpc-1", provider: "emb_c", environment_id: env.id, default_model: "emb_c-3.5", status: "active" });
    expect(await json(await app.request("GET", `/v1/embedding-providers/${created.id}`, { headers: org.owner.key }))).toEqual(created);
    expect(await result(await query("get", { provider_id: created.id }))).toEqual(created);
    const updated = await result(await mutation("update", { provider_id: created.id, default_model: "emb_c-3-lite" }));
    expect(updated).toEqual({ ...created, default_model: "emb_c-3-lite" });
    const narrowed = await result(await query("list", { limit: 10 }, { ...org.owner.key, "x-environment-id": env.id }));
    expect(narrowed.data).toEqual([updated]);
    expect((await result(await query("models", { provider_id: created.id }))).models).toHaveLength(5);
    expect((await mutation("delete", { provider_id: created.id })).status).toBe(200);
    expect(await failure(await query("get", { provider_id: created.id }))).toEqual({ status: 404, code: "not_found" });
  });
});

describe("errors", () => {
  test("validation and conflicts keep their codes", async () => {
    expect(await failure(await mutation("create", { name: "rpc-2", provider: "emb_a" }))).toEqual({ status: 400, code: "validation_error" });
    expect(await failure(await mutation("create", { name: "rpc-2", provider: "emb_a", api_key: "sk-abcdefgh", default_model: "emb_c-3.5" }))).toEqual({ status: 400, code: "validation_error" });
    expect((await mutation("create", { name: "rpc-2", provider: "local" })).status).toBe(200);
    expect(await failure(await mutation("create", { name: "rpc-2", provider: "local" }))).toEqual({ status: 409, code: "name_taken" });
  });
});

describe("authz", () => {
  test("read_only key: mutations 403, queries fine; JWT 401", async () => {
    const ro = await readOnlyKey(app, org.owner);
    expect(await failure(await mutation("create", { name: "rpc-ro", provider: "local" }, ro))).toEqual({ status: 403, code: "insufficient_permission" });
    expect((await query("list", {}, ro)).status).toBe(200);
    expect(await failure(await query("list", {}, org.owner.jwt))).toEqual({ status: 401, code: "unauthorized" });
  });
});
