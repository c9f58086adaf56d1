import { type } from "arktype";
import { readiness } from "../services.ts";
import { defineRoute } from "./route.ts";

const Health = type({ status: "'ok'" });
const Ready = type({ status: "'ready' | 'not_ready'", checks: { "[string]": "boolean" } });

export const healthRoutes = [
  defineRoute({
    method: "GET",
    path: "/healthz",
    tag: "Health",
    summary: "Liveness: the process answers",
    auth: "none",
    response: Health,
    handler: () => ({ status: "ok" }),
  }),
  defineRoute({
    method: "GET",
    path: "/readyz",
    tag: "Health",
    summary: "Readiness: 200 when the database, scheduler and stores are up, else 503 naming what is not",
    auth: "none",
    response: Ready,
    handler: async ({ services }) => {
      const state = await readiness(services);
      return Response.json({ status: state.ready ? "ready" : "not_ready", checks: state.checks }, { status: state.ready ? 200 : 503 });
    },
  }),
];
