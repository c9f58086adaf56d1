// The OpenAPI document (src/http/openapi.ts): lint-clean by Redocly's recommended rules, every
// operation's error responses derived from its route and declared codes, and the two free-form
// fields a user cannot guess — `credentials` and `filters` — described in the document itself.
import { describe, expect, test } from "bun:test";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { parseFilter } from "../../src/drivers/store-api/index.ts";
import { domainRoutes } from "../../src/http/domain-routes.ts";
import { buildOpenApi } from "../../src/http/openapi.ts";
import { errorCodesOf } from "../../src/http/openapi-errors.ts";
import { defineRoute, type AnyRoute } from "../../src/http/route.ts";
import { httpStatus } from "../../src/shared/errors.ts";
import { QueryRequest } from "../../src/domains/query/schemas.ts";

const doc = buildOpenApi(domainRoutes, "0.0.0-test") as any;
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");
const operationOf = (route: AnyRoute) => doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
const codesOf = (response: any): string[] => response.content["application/json"].schema.allOf[1].properties.error.properties.code.enum;

describe("lint", () => {
  test("Redocly's recommended rules find nothing but the missing license", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "/openapi.json", config });
    const report = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(report).toEqual(["warn info-license: Info object should contain `license` field. at #/info"]);
  });
});

describe("error responses", () => {
  test("every operation lists, per status, exactly the codes its route can answer", () => {
    for (const route of domainRoutes) {
      const responses = operationOf(route).responses;
      const listed = Object.entries(responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([status, response]) => codesOf(response).map((code) => `${status} ${code}`));
      const expected = errorCodesOf(route).map((code) => `${httpStatus(code)} ${code}`);
      expect([route.method, route.path, listed]).toEqual([route.method, route.path, expected]);
    }
  });

  test("derived from the route: auth, permission, body, path; declared extras added", () => {
    const byKey = (method: string, path: string) => errorCodesOf(domainRoutes.find((r) => r.method === method && r.path === path)!);
    expect(byKey("DELETE", "/v1/environments/:environment_id")).toEqual([
      "unauthorized",
      "insufficient_permission",
      "not_found",
      "in_use",
      "environment_protected",
      "internal",
      "storage_full",
    ]);
    // A POST that only reads: any key permission, and it writes nothing.
    expect(byKey("POST", "/v1/vector-tables/:vector_table_id/query")).toEqual([
      "validation_error",
      "unauthorized",
      "not_found",
      "sync_behind",
      "vector_table_not_ready",
      "payload_too_large",
      "internal",
      "source_error",
      "provider_error",
    ]);
    expect(byKey("GET", "/v1/tasks")).toEqual(["validation_error", "unauthorized", "internal"]);
    expect(byKey("POST", "/v1/auth/verify")).toEqual(["validation_error", "invalid_request", "unauthorized", "payload_too_large", "rate_limited", "internal", "storage_full"]);
  });

  test("a route declared the usual way is covered with nothing more", () => {
    const route = defineRoute({ method: "POST", path: "/v1/things/:thing_id/poke", tag: "Things", summary: "Poke a thing", auth: "api_key", handler: () => ({}) });
    const codes = errorCodesOf(route);
    expect(codes).toEqual(["validation_error", "unauthorized", "insufficient_permission", "not_found", "payload_too_large", "internal", "storage_full"]);
    const responses = buildOpenApi([route], "0").paths as any;
    expect(Object.keys(responses["/v1/things/{thing_id}/poke"].post.responses)).toEqual(["200", "400", "401", "403", "404", "413", "500", "507"]);
  });

  test("a 429 carries Retry-After and every answer x-request-id", () => {
    const verify = doc.paths["/v1/auth/verify"].post.responses;
    expect(verify["429"].headers["Retry-After"]).toEqual({ $ref: "#/components/headers/RetryAfter" });
    for (const response of Object.values(verify) as any[]) expect(response.headers["x-request-id"]).toEqual({ $ref: "#/components/headers/RequestId" });
    expect(doc.components.headers.RetryAfter.schema.type).toBe("integer");
  });
});

describe("credentials and filters are described in the document", () => {
  test("the query body's filters is the Filter schema, with the operators and $or", () => {
    const body = doc.paths["/v1/vector-tables/{vector_table_id}/query"].post.requestBody.content["application/json"].schema;
    expect(body.properties.filters).toEqual({ anyOf: [{ $ref: "#/components/schemas/Filter" }, { type: "null" }] });
    const { Filter, FilterCondition, FilterOperators } = doc.components.schemas;
    expect(Filter.properties.$or).toMatchObject({ type: "array", minItems: 1, items: { $ref: "#/components/schemas/Filter" } });
    expect(Filter.additionalProperties).toEqual({ $ref: "#/components/schemas/FilterCondition" });
    expect(FilterCondition.anyOf).toHaveLength(3);
    expect(Object.keys(FilterOperators.properties).sort()).toEqual(["eq", "exists", "gt", "gte", "in", "lt", "lte", "neq", "nin"]);
    for (const [op, schema] of Object.entries(FilterOperators.properties) as [string, any][]) expect([op, typeof schema.description]).toEqual([op, "string"]);
  });

  test("the Filter example is a filter the service accepts", () => {
    const columns = [
      { name: "category", type: "keyword" as const },
      { name: "price", type: "float" as const },
      { name: "in_stock", type: "boolean" as const },
      { name: "restock_days", type: "integer" as const },
    ];
    for (const example of doc.components.schemas.Filter.examples) expect(parseFilter(example, columns)).not.toBeNull();
  });

  test("credentials: either provider's object, every field described", () => {
    const create = doc.paths["/v1/providers/{provider}/connections"].post.requestBody.content["application/json"].schema;
    const update = doc.paths["/v1/connections/{connection_id}"].put.requestBody.content["application/json"].schema;
    expect(create.properties.credentials).toEqual({ $ref: "#/components/schemas/ConnectionCredentials" });
    expect(update.properties.credentials).toEqual({ $ref: "#/components/schemas/ConnectionCredentials" });
    const { ConnectionCredentials, RelationalCredentials, WarehouseCredentials } = doc.components.schemas;
    expect(ConnectionCredentials.oneOf).toEqual([{ $ref: "#/components/schemas/RelationalCredentials" }, { $ref: "#/components/schemas/WarehouseCredentials" }]);
    expect(Object.keys(RelationalCredentials.properties).sort()).toEqual(["database", "host", "password", "port", "ssl_mode", "user"]);
    expect(RelationalCredentials.required.sort()).toEqual(["database", "host", "password", "user"]);
    expect(RelationalCredentials.properties.port.default).toBe(5432);
    expect(Object.keys(WarehouseCredentials.properties).sort()).toEqual(["account", "auth_method", "database", "password", "private_key", "role", "schema", "user", "warehouse"]);
    expect(WarehouseCredentials.required.sort()).toEqual(["account", "auth_method", "user"]);
    expect(WarehouseCredentials.properties.schema.default).toBe("PUBLIC");
    for (const schema of [RelationalCredentials, WarehouseCredentials]) {
      for (const [field, s] of Object.entries(schema.properties) as [string, any][]) expect([field, typeof s.description]).toEqual([field, "string"]);
    }
  });

  test("the document sends no reader to a file they do not have", () => {
    expect(JSON.stringify(doc)).not.toMatch(/SPEC|CONTRACT|docs\/[a-z-]+\.md/);
  });

  test("the runtime check stays the parser's: the body schema takes any object for filters", () => {
    const body: unknown = { query: "q", filters: { anything: { goes: 1 } } };
    expect(QueryRequest(body)).toEqual(body as never);
  });
});
