import type { Schema } from "../shared/validate.ts";
import type { AnyRoute } from "./route.ts";

type JsonSchema = Record<string, unknown>;

// Morphs (e.g. a query string parsed to an integer) have no JSON Schema of their own; their
// input side is what a client sends, so document that.
function toJsonSchema(schema: Schema | undefined): JsonSchema | undefined {
  if (!schema?.toJsonSchema) return undefined;
  const { $schema: _, ...rest } = schema.toJsonSchema({ fallback: (ctx: { base: JsonSchema }) => ctx.base }) as JsonSchema;
  return rest;
}

const ErrorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
    },
  },
};

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

function operation(route: AnyRoute): JsonSchema {
  const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
  const query = toJsonSchema(route.query) as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
  const queryParams = Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: "query", required: query?.required?.includes(name) ?? false, schema }));
  const headerParams = (route.headers ?? []).map((h) => ({ name: h.name, in: "header", required: false, description: h.description, schema: { type: "string" } }));
  const status = String(route.status ?? 200);
  const response = toJsonSchema(route.response);
  const body = toJsonSchema(route.body);
  return {
    tags: [route.tag],
    summary: route.summary,
    operationId: `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    parameters: [...pathParams, ...queryParams, ...headerParams],
    ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body } } } } : {}),
    ...(route.auth === "none" ? { security: [] } : { security: [{ [route.auth === "jwt" ? "accessToken" : "apiKey"]: [] }] }),
    responses: {
      [status]: status === "204" ? { description: "No content" } : { description: "Success", content: { "application/json": { schema: response ?? {} } } },
      default: { description: "Error (docs/api.md#errors)", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
    },
  };
}

/** OpenAPI 3.1, built from the same route list and arktype schemas that serve requests. */
export function buildOpenApi(routes: AnyRoute[], version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: { title: "vecsync", version, description: "Keeps vector embeddings of a database table current and serves filtered semantic search." },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { Error: ErrorSchema },
      securitySchemes: {
        accessToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "From POST /v1/auth/verify; organization management" },
        apiKey: { type: "http", scheme: "bearer", description: "An API key (vsk_…); everything else" },
      },
    },
  };
}
