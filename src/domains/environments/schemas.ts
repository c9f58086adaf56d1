import { type } from "arktype";
import { PageQuery, pageSchema } from "../../shared/pagination.ts";

export const EnvironmentName = type(/^[a-z0-9_-]{1,50}$/).describe("1-50 lowercase letters, digits, hyphens or underscores");

export const CreateEnvironment = type({ "+": "reject", name: EnvironmentName });
export type CreateEnvironment = typeof CreateEnvironment.infer;

export const EnvironmentIdParam = type({ "+": "reject", environment_id: "string" });

export const ListEnvironments = PageQuery;

export const Environment = type({ id: "string", org_id: "string", name: "string", created_at: "string" });
export type Environment = typeof Environment.infer;

export const EnvironmentPage = pageSchema(Environment);

/** The environment every organization is born with; it cannot be deleted (docs/api.md#environments). */
export const PROD_ENVIRONMENT = "prod";
