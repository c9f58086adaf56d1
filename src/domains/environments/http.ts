import { defineRoute } from "../../http/route.ts";
import { CreateEnvironment, Environment, EnvironmentPage, ListEnvironments } from "./schemas.ts";
import { createEnvironment, deleteEnvironment, getEnvironment, listEnvironments } from "./service.ts";

const tag = "Environments";

export const environmentRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/environments",
    tag,
    summary: "Create an environment",
    auth: "api_key",
    errors: ["name_taken"],
    body: CreateEnvironment,
    status: 201,
    response: Environment,
    handler: ({ services, actor, body }) => createEnvironment(services, actor, body),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/environments",
    tag,
    summary: "List environments (cursor pagination, oldest first)",
    auth: "api_key",
    query: ListEnvironments,
    response: EnvironmentPage,
    handler: ({ services, actor, query }) => listEnvironments(services, actor, query),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/environments/:environment_id",
    tag,
    summary: "Get an environment",
    auth: "api_key",
    response: Environment,
    handler: ({ services, actor, params }) => getEnvironment(services, actor, params.environment_id),
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/environments/:environment_id",
    tag,
    summary: "Delete an environment (not prod, not while connections or vector tables are attached)",
    auth: "api_key",
    errors: ["in_use", "environment_protected"],
    status: 204,
    handler: ({ services, actor, params }) => deleteEnvironment(services, actor, params.environment_id),
  }),
];
