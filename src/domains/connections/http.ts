import { defineRoute } from "../../http/route.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { Connection, ConnectionPage, CreateConnection, ListConnections, TestResult, UpdateConnection } from "./schemas.ts";
import { createConnection, deleteConnection, getConnection, listConnections, testConnection, updateConnection } from "./service.ts";

const tag = "Connections";

export const connectionRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/providers/:provider/connections",
    tag,
    summary: "Create a connection to a source database (provider db_warehouse or db_relational)",
    auth: "api_key",
    errors: ["name_taken"],
    body: CreateConnection,
    headers: [{ name: "X-Environment-Id", description: "The environment to create the connection in; absent → the organization's prod environment" }],
    status: 201,
    response: Connection,
    handler: ({ services, actor, params, body, headers }) => createConnection(services, actor, params.provider, body, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/connections",
    tag,
    summary: "List connections (cursor pagination, oldest first)",
    auth: "api_key",
    errors: ["not_found"],
    query: ListConnections,
    headers: [{ name: "X-Environment-Id", description: "When sent, only that environment's connections" }],
    response: ConnectionPage,
    handler: ({ services, actor, query, headers }) => listConnections(services, actor, query, headers.get(ENVIRONMENT_HEADER)),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/connections/:connection_id",
    tag,
    summary: "Get a connection (credentials are never answered)",
    auth: "api_key",
    response: Connection,
    handler: ({ services, actor, params }) => getConnection(services, actor, params.connection_id),
  }),
  defineRoute({
    method: "PUT",
    path: "/v1/connections/:connection_id",
    tag,
    summary: "Rename a connection or replace its credentials (a credentials change sets status back to pending)",
    auth: "api_key",
    errors: ["name_taken"],
    body: UpdateConnection,
    response: Connection,
    handler: ({ services, actor, params, body }) => updateConnection(services, actor, params.connection_id, body),
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/connections/:connection_id",
    tag,
    summary: "Delete a connection (not while vector tables use it)",
    auth: "api_key",
    errors: ["in_use"],
    status: 204,
    handler: ({ services, actor, params }) => deleteConnection(services, actor, params.connection_id),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/connections/:connection_id/test",
    tag,
    summary: "Test a connection; stores the outcome as its status (a failed test is 200 with the database's error)",
    auth: "api_key",
    response: TestResult,
    handler: ({ services, actor, params }) => testConnection(services, actor, params.connection_id),
  }),
];
