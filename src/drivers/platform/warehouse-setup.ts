// What a warehouse platform table needs of the warehouse, checked where it is first needed: a
// schema VECSYNC in the connection's database, made when missing (CREATE SCHEMA needs a grant on
// the database; an existing schema needs only CREATE TABLE on it, so it is looked up first), and
// the source key's exact type. A refusal keeps the warehouse's own words and says what to grant.
import { DriverError } from "../../shared/errors.ts";
import type { QueryResult } from "../sources/warehouse-connect.ts";
import { PlatformSetupError } from "./types.ts";
import type { Bind } from "./warehouse-filters.ts";
import { PLATFORM_SCHEMA, quoteIdent, schemaSql, type ParsedRef, type WarehouseKeyColumn } from "./warehouse-schema.ts";

type Run = (sql: string, binds: Bind[], operation: string) => Promise<QueryResult>;

/** The warehouse's "SQL access control error" (003001, SQL state 42501). */
export function isPrivilegeError(err: unknown): err is DriverError {
  return err instanceof DriverError && (err.context.code === "003001" || err.context.sqlState === "42501");
}

/**
 * A privilege refusal as the service answers it (400, CONTRACT 12): the warehouse's words, then
 * what vecsync needs, as pgvector's: a PlatformSetupError of kind `privileges`, which the seam answers 400.
 */
export function privilegeError(err: unknown, database: string): PlatformSetupError | null {
  if (!isPrivilegeError(err)) return null;
  return new PlatformSetupError(
    "privileges",
    `${err.message}. Platform mode needs CREATE SCHEMA on database "${database}" (to create the schema ${PLATFORM_SCHEMA}), or an existing schema ${PLATFORM_SCHEMA} this role may create tables in`,
    { cause: err },
  );
}

export async function ensureSchema(run: Run, ref: ParsedRef): Promise<void> {
  const found = await run(`SELECT 1 FROM ${quoteIdent(ref.database)}.INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME = ?`, [PLATFORM_SCHEMA], "find schema");
  if (found.rows.length === 0) await run(`CREATE SCHEMA IF NOT EXISTS ${schemaSql(ref)}`, [], "create schema");
}

/** The key column of a source table typed as the catalog has it (`NUMBER(10,2)`), for WarehouseSpec.primaryKey. */
export async function keyColumn(run: Run, table: { schema: string; name: string }, column: string): Promise<WarehouseKeyColumn> {
  const result = await run(
    "SELECT DATA_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
    [table.schema, table.name, column],
    `describe ${table.name}.${column}`,
  );
  const row = result.rows[0];
  if (!row) throw new DriverError(`column ${JSON.stringify(column)} does not exist in ${table.schema}.${table.name}`, { retryable: false });
  const type = String(row[0]);
  if (type === "NUMBER") return { name: column, type: `NUMBER(${Number(row[1] ?? 38)},${Number(row[2] ?? 0)})` };
  return { name: column, type: type === "TEXT" ? "VARCHAR" : type };
}
