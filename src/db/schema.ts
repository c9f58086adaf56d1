// The drizzle schema index: every domain's tables.ts is re-exported here so drizzle-kit sees one
// schema and services get one typed `db`.
export * from "./meta-tables.ts";
export * from "../domains/auth/tables.ts";
export * from "../domains/organizations/tables.ts";
export * from "../domains/api-keys/tables.ts";
export * from "../domains/environments/tables.ts";
export * from "../domains/embedding-providers/tables.ts";
export * from "../domains/connections/tables.ts";
export * from "../scheduler/tables.ts";
export * from "../domains/vector-tables/tables.ts";
