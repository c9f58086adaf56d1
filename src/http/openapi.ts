import { OPENAPI_COMPONENT, type OpenApiComponent, type Schema } from "../shared/validate.ts";
import { ERROR_COMPONENTS, errorResponses, RETRY_AFTER_REF } from "./openapi-errors.ts";
import type { AnyRoute } from "./route.ts";

type JsonSchema = Record<string, unknown>;

/** Component schemas gathered while the operations are written; one name, one schema. */
type Components = Map<string, JsonSchema>;

// Morphs (e.g. a query string parsed to an integer) have no JSON Schema of their own; their
// input side is what a client sends, so document that.
function toJsonSchema(schema: Schema | undefined, components: Components): JsonSchema | undefined {
  if (!schema?.toJsonSchema) return undefined;
  const { $schema: _, ...rest } = schema.toJsonSchema({ fallback: (ctx: { base: JsonSchema }) => ctx.base }) as JsonSchema;
  return hoist(rest, components) as JsonSchema;
}

/**
 * A schema marked with `documentedAs` (src/shared/validate.ts) carries its component in its meta,
 * which arktype copies into the JSON Schema: that node becomes a `$ref` and the component's schemas
 * join `components.schemas`.
 */
function hoist(node: unknown, components: Components): unknown {
  if (Array.isArray(node)) return node.map((n) => hoist(n, components));
  if (typeof node !== "object" || node === null) return node;
  const component = (node as Record<string, unknown>)[OPENAPI_COMPONENT] as OpenApiComponent | undefined;
  if (component) {
    for (const [name, schema] of Object.entries(component.schemas)) {
      const known = components.get(name);
      if (known && JSON.stringify(known) !== JSON.stringify(schema)) throw new Error(`two different OpenAPI components are named ${name}`);
      components.set(name, schema);
    }
    return { $ref: `#/components/schemas/${component.name}` };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, hoist(v, components)]));
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

const requestId = { "x-request-id": { $ref: "#/components/headers/RequestId" } };

function operation(route: AnyRoute, components: Components): JsonSchema {
  const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
  const query = toJsonSchema(route.query, components) as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
  const queryParams = Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: "query", required: query?.required?.includes(name) ?? false, schema }));
  const headerParams = (route.headers ?? []).map((h) => ({ name: h.name, in: "header", required: false, description: h.description, schema: { type: "string" } }));
  const status = String(route.status ?? 200);
  const response = toJsonSchema(route.response, components);
  const body = toJsonSchema(route.body, components);
  const success =
    status === "204"
      ? { description: "No content", headers: requestId }
      : { description: "Success", headers: requestId, content: { "application/json": { schema: response ?? {} } } };
  return {
    tags: [route.tag],
    summary: route.summary,
    operationId: `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    parameters: [...pathParams, ...queryParams, ...headerParams],
    ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body } } } } : {}),
    ...(route.auth === "none" ? { security: [] } : { security: [{ [route.auth === "jwt" ? "accessToken" : "apiKey"]: [] }] }),
    responses: { [status]: success, ...errorResponses(route) },
  };
}

const DESCRIPTION = [
  "Keeps vector embeddings of a database table current and serves filtered semantic search.",
  "",
  "Every credential is sent as `Authorization: Bearer <token>`: an access token (from `POST /v1/auth/verify`) for organization management, an API key (`vsk_…`) for everything else.",
  "A `read_only` key may call GET operations and the query, nothing else. Every error answers the `Error` body; each operation lists the codes it can answer.",
  "Health checks, outside this document and without credentials: `GET /healthz` (200 while the process answers) and `GET /readyz` (200 when ready, else 503).",
].join("\n");

/** OpenAPI 3.1, built from the same route list and arktype schemas that serve requests. */
export function buildOpenApi(routes: AnyRoute[], version: string): JsonSchema {
  const components: Components = new Map();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = operation(route, components);
  }
  return {
    openapi: "3.1.0",
    info: { title: "vecsync", version, description: DESCRIPTION },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { ...ERROR_COMPONENTS, ...Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))) },
      headers: {
        RequestId: { description: "The request's id, also in the service's log line for it.", schema: { type: "string" } },
        ...(JSON.stringify(paths).includes(RETRY_AFTER_REF) ? { RetryAfter: { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 0 } } } : {}),
      },
      securitySchemes: {
        accessToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "From POST /v1/auth/verify or /v1/auth/refresh, valid 1 hour; organization management" },
        apiKey: { type: "http", scheme: "bearer", description: "An API key (vsk_…), shown once when it is made; everything else" },
      },
    },
  };
}
