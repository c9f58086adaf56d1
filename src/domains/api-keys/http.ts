import { defineRoute } from "../../http/route.ts";
import { ApiKeyList, CreateApiKey, CreatedApiKey } from "./schemas.ts";
import { createApiKey, listVisibleApiKeys, revokeVisibleApiKey } from "./service.ts";

const tag = "API keys";

export const apiKeyRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/api-keys",
    tag,
    summary: "Create an API key (the raw key is shown once, in `key`)",
    auth: "api_key",
    body: CreateApiKey,
    status: 201,
    response: CreatedApiKey,
    handler: ({ services, actor, body }) => createApiKey(services, actor, body),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/api-keys",
    tag,
    summary: "List API keys: owners and admins see all of the organization's, members their own",
    auth: "api_key",
    response: ApiKeyList,
    handler: ({ services, actor }) => listVisibleApiKeys(services, actor),
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/api-keys/:key_id",
    tag,
    summary: "Revoke an API key",
    auth: "api_key",
    errors: ["insufficient_role"],
    status: 204,
    handler: ({ services, actor, params }) => revokeVisibleApiKey(services, actor, params.key_id),
  }),
];
