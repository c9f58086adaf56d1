import { type } from "arktype";
import { PageQuery, pageSchema } from "../../shared/pagination.ts";
import { documentedAs } from "../../shared/validate.ts";
import type { CredentialsInput } from "./credentials.ts";
import { CREDENTIALS_COMPONENT } from "./credentials-doc.ts";

export const CONNECTION_PROVIDERS = ["db_warehouse", "db_relational"] as const;
export type ConnectionProvider = (typeof CONNECTION_PROVIDERS)[number];
export const ConnectionProvider = type.enumerated(...CONNECTION_PROVIDERS);

export const ConnectionMode = type("'managed' | 'platform'");
export type ConnectionMode = typeof ConnectionMode.infer;

export type ConnectionStatus = "pending" | "connected" | "failed";

export const ConnectionName = type("1 <= string <= 100");

// `credentials` is only "an object" here: its shape depends on the provider (and, on update, on
// the stored connection), so credentials.ts checks it — without ever echoing a value back. Its
// type and its OpenAPI description are the providers' objects all the same.
const CredentialsObject = documentedAs(
  type("Record<string, unknown>").describe("the provider's credentials object (docs/api.md#credentials)").as<CredentialsInput>(),
  CREDENTIALS_COMPONENT,
);

const createFields = { name: ConnectionName, mode: ConnectionMode, credentials: CredentialsObject } as const;
const updateFields = { "name?": ConnectionName, "credentials?": CredentialsObject } as const;

export const CreateConnection = type({ "+": "reject", ...createFields });
export type CreateConnection = typeof CreateConnection.infer;

export const UpdateConnection = type({ "+": "reject", ...updateFields });
export type UpdateConnection = typeof UpdateConnection.infer;

export const ListConnections = PageQuery;

export const ConnectionIdParam = type({ "+": "reject", connection_id: "string" });

/** tRPC inputs: the path parameter and the `X-Environment-Id` header become fields. */
export const CreateConnectionInput = type({ "+": "reject", ...createFields, provider: type("string").as<ConnectionProvider>(), "environment_id?": "string" });
export const UpdateConnectionInput = type({ "+": "reject", ...updateFields, connection_id: "string" });
export const ListConnectionsInput = type({ "+": "reject", "limit?": PageQuery.get("limit"), "cursor?": "string", "environment_id?": "string" });

export const Connection = type({
  id: "string",
  org_id: "string",
  environment_id: "string",
  name: "string",
  provider: ConnectionProvider,
  mode: ConnectionMode,
  status: "'pending' | 'connected' | 'failed'",
  last_tested_at: "string | null",
  created_at: "string",
  updated_at: "string",
});
export type Connection = typeof Connection.infer;

export const ConnectionPage = pageSchema(Connection);

/**
 * What a relational database offers of pgvector (additive to SPEC 2.8, docs/api.md#connection-test):
 * `installed` (CREATE EXTENSION vector was run), `available` (the server could install it), the
 * installed or installable `version`, and `usable` (installed at 0.8.0+, what platform mode needs).
 */
export const PgvectorReport = type({ installed: "boolean", available: "boolean", version: "string | null", usable: "boolean" });

/** docs/api.md#connection-test test result: a failed test is an answer (200), not an error. */
export const TestResult = type({ status: "'connected'", details: { latency_ms: "number.integer", "pgvector?": PgvectorReport } }).or({ status: "'failed'", details: { error: "string" } });
export type TestResult = typeof TestResult.infer;
