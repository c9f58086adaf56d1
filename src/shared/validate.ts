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
