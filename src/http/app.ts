import { Elysia } from "elysia";
import { AppError, errorBody, knownFailure, rootMessage } from "../shared/errors.ts";
import { parse } from "../shared/validate.ts";
import type { Services } from "../services.ts";
import { UNMATCHED_ROUTE } from "../shared/metrics.ts";
import { resolveActor } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { clientAddress } from "./client-ip.ts";
import { requestIdFor } from "./request-id.ts";
import type { AnyRoute } from "./route.ts";

type Extra = { fetch?: (request: Request, requestId: string) => Promise<Response> };

const json = (body: unknown, status: number, requestId: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId, ...headers },
  });

/**
 * The one error boundary (STYLE 2): our AppError → its status and body; anything else → logged
 * with the request id and answered 500 `internal`, never with a stack.
 */
export function errorResponse(services: Services, err: unknown, requestId: string): Response {
  const known = knownFailure(err);
  if (known) {
    // A full disk is the operator's to fix: say so in the log once per request, without a stack.
    // Only the innermost message: a query error's own message lists the statement's parameters.
    if (known !== err) services.logger.warn({ request_id: requestId, error: rootMessage(err) }, "write refused: storage full");
    return json(errorBody(known), known.status, requestId, known.headers);
  }
  services.logger.error({ err, request_id: requestId }, "unexpected error");
  return json(errorBody(new AppError("internal", "An unexpected error occurred")), 500, requestId);
}

async function runRoute(services: Services, route: AnyRoute, request: Request, params: Record<string, string>, requestId: string, ip: string | null) {
  const actor = await resolveActor(services.authenticator, route.auth, request.headers);
  const raw = route.body || route.method === "POST" || route.method === "PUT" ? await readJsonBody(request) : undefined;
  const body = route.body ? parse(route.body, raw ?? {}) : undefined;
  const query = route.query ? parse(route.query, Object.fromEntries(new URL(request.url).searchParams), "query") : {};
  const result = await route.handler({ services, actor: actor as never, body, query, params, headers: request.headers, requestId, ip });
  if (result instanceof Response) {
    result.headers.set("x-request-id", requestId);
    return result;
  }
  const status = route.status ?? 200;
  if (status === 204) return new Response(null, { status, headers: { "x-request-id": requestId } });
  return json(result, status, requestId);
}

// An invitation's accept token is a credential in the path: the access log keeps the route, not the token.
const INVITATION_TOKEN = /(\/invitations\/)[^/]+(\/accept)$/;
export const loggedPath = (pathname: string) => pathname.replace(INVITATION_TOKEN, "$1[redacted]$2");

/** Builds the HTTP app: REST routes, health, and whatever else (tRPC, docs) is mounted beside them. */
export function buildApp(services: Services, routes: AnyRoute[], mounts: { prefix: string; fetch: (req: Request, requestId: string, ip: string | null) => Promise<Response> }[] = []) {
  const ids = new WeakMap<Request, string>();
  const idOf = (request: Request) => {
    let id = ids.get(request);
    if (!id) ids.set(request, (id = requestIdFor(request.headers)));
    return id;
  };
  // When each request arrived (performance.now(), monotonic): the access log's duration_ms and
  // the HTTP histogram measure from the first hook to the response being sent.
  const arrivals = new WeakMap<Request, number>();

  const app = new Elysia()
    .onRequest(({ request }) => {
      arrivals.set(request, performance.now());
      idOf(request);
    })
    .onError(({ code, error, request, set }) => {
      const requestId = idOf(request);
      const response =
        code === "NOT_FOUND" ? json(errorBody(new AppError("not_found", "No such route")), 404, requestId)
        : code === "PARSE" ? errorResponse(services, new AppError("validation_error", "The request body is malformed"), requestId)
        : errorResponse(services, error, requestId);
      set.status = response.status; // for the access log
      return response;
    })
    .onAfterResponse(({ request, responseValue, set, route }) => {
      const status = Number(responseValue instanceof Response ? responseValue.status : set.status);
      const durationMs = performance.now() - (arrivals.get(request) ?? performance.now());
      services.logger.info({ request_id: idOf(request), method: request.method, path: loggedPath(new URL(request.url).pathname), status, duration_ms: Math.round(durationMs * 100) / 100 }, "request");
      // Elysia's `route` is the matched template (`/v1/vector-tables/:vector_table_id`, `/trpc/*`); none for a 404.
      services.metrics.http(request.method, route || UNMATCHED_ROUTE, status, durationMs / 1000);
    });

  for (const route of routes) {
    app.route(
      route.method,
      route.path,
      async ({ request, params, server }) => {
        const requestId = idOf(request);
        const ip = clientAddress(server?.requestIP(request)?.address ?? null, request.headers, services.config.trustedProxies);
        services.foreground.enter();
        try {
          return await runRoute(services, route, request, params as Record<string, string>, requestId, ip);
        } catch (err) {
          return errorResponse(services, err, requestId);
        } finally {
          services.foreground.leave();
        }
      },
      { parse: "none" },
    );
  }

  for (const mount of mounts) {
    app.all(`${mount.prefix}/*`, async ({ request, server }) => {
      const requestId = idOf(request);
      services.foreground.enter();
      try {
        const res = await mount.fetch(request, requestId, clientAddress(server?.requestIP(request)?.address ?? null, request.headers, services.config.trustedProxies));
        res.headers.set("x-request-id", requestId);
        return res;
      } catch (err) {
        return errorResponse(services, err, requestId);
      } finally {
        services.foreground.leave();
      }
    }, { parse: "none" });
  }
  return app;
}

export type App = ReturnType<typeof buildApp>;
