import type { Actor, AuthScheme, KeyActor, UserActor } from "../shared/actor.ts";
import type { ErrorCode } from "../shared/errors.ts";
import type { Schema } from "../shared/validate.ts";
import type { Services } from "../services.ts";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

type ActorFor<A extends AuthScheme> = A extends "jwt" ? UserActor : A extends "api_key" ? KeyActor : null;

// A `:name` segment runs to the next `/`, as Elysia reads it (and as openapi.ts documents it).
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<Rest>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path parameters of a route's template: `/v1/x/:x_id` → `{ x_id: string }`. */
export type PathParams<P extends string> = string extends P ? Record<string, string> : { [K in ParamNames<P>]: string };

export type RouteContext<A extends AuthScheme, B, Q, P extends string = string> = {
  services: Services;
  actor: ActorFor<A>;
  body: B;
  query: Q;
  params: PathParams<P>;
  headers: Headers;
  requestId: string;
  /** The client's address, for rate limits. */
  ip: string | null;
};

/**
 * One REST route: the schemas feed validation and OpenAPI, the handler is a line or two calling a
 * service. A handler's return value is the JSON body with `status` (204 sends no body).
 */
export type RouteDef<A extends AuthScheme = AuthScheme, B = unknown, Q = unknown, P extends string = string> = {
  method: Method;
  /** Elysia-style path, e.g. `/v1/environments/:environment_id`; its `:name`s type the handler's `params`. */
  path: P;
  tag: string;
  summary: string;
  auth: A;
  body?: Schema<B>;
  query?: Schema<Q>;
  /** Documented headers the route reads, e.g. `X-Environment-Id`. */
  headers?: { name: string; description: string }[];
  status?: number;
  /** The answer's schema, for OpenAPI only. */
  response?: Schema;
  /**
   * For OpenAPI: the error codes this route answers beyond those its shape implies (openapi-errors.ts
   * derives 400/401/403/404/413/500/507 from the auth scheme, method, body, query and path), e.g. a
   * 409 `name_taken`, or 404 for an id sent in the body or `X-Environment-Id`.
   */
  errors?: ErrorCode[];
  /** A POST that writes nothing (the query): `read_only` keys may call it (docs/api.md#permissions). */
  readOnly?: boolean;
  handler: (ctx: RouteContext<A, B, Q, P>) => unknown;
};

/** A route in a list of routes: any auth, body, query and path; `params` is a plain record. */
export type AnyRoute = RouteDef<AuthScheme, any, any>;

export function defineRoute<A extends AuthScheme, P extends string, B = undefined, Q = Record<string, string>>(def: RouteDef<A, B, Q, P>): AnyRoute {
  // The list forgets each route's own types; app.ts hands the handler the params Elysia read from
  // this same path template, so `params` holds exactly the names PathParams<P> promised.
  return def as unknown as AnyRoute;
}

export type { Actor };
