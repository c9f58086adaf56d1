import type { Actor, AuthScheme, KeyActor, UserActor } from "../shared/actor.ts";
import type { Schema } from "../shared/validate.ts";
import type { Services } from "../services.ts";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

type ActorFor<A extends AuthScheme> = A extends "jwt" ? UserActor : A extends "api_key" ? KeyActor : null;

export type RouteContext<A extends AuthScheme, B, Q> = {
  services: Services;
  actor: ActorFor<A>;
  body: B;
  query: Q;
  params: Record<string, string>;
  headers: Headers;
  requestId: string;
  /** The client's address, for rate limits. */
  ip: string | null;
};

/**
 * One REST route: the schemas feed validation and OpenAPI, the handler is a line or two calling a
 * service. A handler's return value is the JSON body with `status` (204 sends no body).
 */
export type RouteDef<A extends AuthScheme = AuthScheme, B = unknown, Q = unknown> = {
  method: Method;
  /** Elysia-style path, e.g. `/v1/environments/:environment_id`. */
  path: string;
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
  handler: (ctx: RouteContext<A, B, Q>) => unknown;
};

export type AnyRoute = RouteDef<AuthScheme, any, any>;

export function defineRoute<A extends AuthScheme, B = undefined, Q = Record<string, string>>(def: RouteDef<A, B, Q>): AnyRoute {
  return def as AnyRoute;
}

export type { Actor };
