import { type } from "arktype";

export const CreateApiKey = type({
  "+": "reject",
  name: "1 <= string <= 100",
  "permission?": "'full' | 'read_only'",
});
export type CreateApiKey = typeof CreateApiKey.infer;

export const KeyIdParam = type({ "+": "reject", key_id: "string" });

export const ApiKey = type({
  id: "string",
  org_id: "string",
  name: "string",
  key_prefix: "string",
  permission: "'full' | 'read_only'",
  created_by: "string",
  created_at: "string",
  revoked_at: "string | null",
});
export type ApiKey = typeof ApiKey.infer;

export const CreatedApiKey = type({ key: "string", api_key: ApiKey });
export const ApiKeyList = type({ data: ApiKey.array() });
