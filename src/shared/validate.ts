import { type } from "arktype";
import { validationError, type ErrorDetail } from "./errors.ts";

/** Anything arktype can validate: calling it yields the data or `type.errors`. */
export type Schema<T = unknown> = ((data: unknown) => T | InstanceType<typeof type.errors>) & {
  toJsonSchema?: (opts?: object) => object;
  infer: T;
};

export function issuesOf(errors: InstanceType<typeof type.errors>): ErrorDetail[] {
  return errors.map((e) => ({
    path: e.path.map(String).join("."),
    message: e.problem === "must be removed" ? "is not a known field" : e.problem,
  }));
}

/** Validates input against a schema; failures become 400 `validation_error` with details. */
export function parse<T>(schema: Schema<T>, data: unknown, where?: string): T {
  const out = schema(data);
  if (out instanceof type.errors) {
    const details = issuesOf(out).map((d) => (where ? { ...d, path: d.path ? `${where}.${d.path}` : where } : d));
    throw validationError(details);
  }
  return out as T;
}

/**
 * A named OpenAPI component: `name` is the schema a field refers to, `schemas` every schema it needs
 * (itself included; they refer to each other as `#/components/schemas/<name>`).
 */
export type OpenApiComponent = { name: string; schemas: Record<string, Record<string, unknown>> };

/**
 * The meta key under which a schema carries its OpenAPI component: src/http/openapi.ts puts a `$ref`
 * where the schema's own JSON Schema would be. For fields whose runtime check is deliberately
 * loose — a filter, checked against the table's columns by its own parser; credentials, checked
 * per provider — so that the document still describes them in full.
 */
export const OPENAPI_COMPONENT = "x-vecsync-component";

declare global {
  interface ArkEnv {
    meta(): { [OPENAPI_COMPONENT]?: OpenApiComponent };
  }
}

/** Marks `schema` as documented by an OpenAPI component (see OPENAPI_COMPONENT). */
export function documentedAs<S extends { configure(meta: { [OPENAPI_COMPONENT]: OpenApiComponent }): unknown }>(schema: S, component: OpenApiComponent): S {
  return schema.configure({ [OPENAPI_COMPONENT]: component }) as S;
}
