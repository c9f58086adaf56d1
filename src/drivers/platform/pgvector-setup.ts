// What a pgvector platform table needs of the source database, checked before anything is
// created: the `vector` extension (0.8 or later: halfvec for wide models, iterative index scans for
// filtered searches) and a schema `vecsync` we may create tables in. vecsync does not create the
// extension itself: installing an extension is the database owner's decision, so a missing one
// is refused with the statement to run (docs/vector-tables.md#platform-tables).
import type postgres from "postgres";
import { DriverError } from "../../shared/errors.ts";
import { PLATFORM_SCHEMA } from "./pgvector-schema.ts";
import { PlatformSetupError } from "./types.ts";

/** Iterative scans (`hnsw.iterative_scan`) arrived in 0.8.0; halfvec in 0.7.0. */
export const MIN_PGVECTOR = [0, 8, 0] as const;

/** What a connection test reports about pgvector (docs/api.md#connections). */
export interface PgvectorProbe {
  /** `CREATE EXTENSION vector` has been run in this database. */
  installed: boolean;
  /** The server has the extension's files, so `CREATE EXTENSION vector` can install it. */
  available: boolean;
  /** The installed version, else the version the server would install; null when neither. */
  version: string | null;
  /** Platform mode can use it: installed at 0.8.0 or later. */
  usable: boolean;
}

type Runner = Pick<postgres.Sql, "unsafe">;

const atLeast = (version: string, min: readonly number[]) => {
  const parts = version.split(/[.-]/).map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < min.length; i++) if ((parts[i] ?? 0) !== min[i]) return (parts[i] ?? 0) > min[i]!;
  return true;
};

export async function probePgvector(sql: Runner): Promise<PgvectorProbe> {
  const [row] = await sql.unsafe(
    `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
  );
  const installed = (row?.installed as string | null) ?? null;
  const available = (row?.available as string | null) ?? null;
  return { installed: installed !== null, available: available !== null, version: installed ?? available, usable: installed !== null && atLeast(installed, MIN_PGVECTOR) };
}

/** The refusal to give when pgvector cannot be used, or null when it can. */
export function pgvectorProblem(probe: PgvectorProbe, database: string): string | null {
  const min = MIN_PGVECTOR.join(".");
  if (probe.usable) return null;
  if (probe.installed) return `the source database's pgvector is ${probe.version}; platform mode needs ${min} or later: run ALTER EXTENSION vector UPDATE; in database "${database}" (after installing pgvector ${min}+ on the server if needed)`;
  if (probe.available) return `the source database "${database}" does not have the vector extension: run CREATE EXTENSION vector; in it (as a user allowed to create extensions), then try again`;
  return `the source database's server does not have pgvector installed: install pgvector ${min} or later on it, then run CREATE EXTENSION vector; in database "${database}"`;
}

/** SQLSTATE 42501 insufficient_privilege: the database's own words, and what vecsync needs. */
export function privilegeError(err: unknown, database: string): PlatformSetupError | null {
  if (sqlState(err) !== "42501") return null;
  const words = err instanceof Error ? err.message : String(err);
  return new PlatformSetupError(
    "privileges",
    `the source database refused: ${words}. Platform mode needs CREATE on database "${database}" (to create the schema ${PLATFORM_SCHEMA}), or an existing schema ${PLATFORM_SCHEMA} this user may create tables in`,
    { cause: err },
  );
}

export const sqlState = (e: unknown): string => (typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "");

/** The extension checked and the schema created, once per database; serialized because CREATE SCHEMA IF NOT EXISTS is not race-free. */
export async function setupDatabase(sql: postgres.Sql, database: string): Promise<void> {
  const problem = pgvectorProblem(await probePgvector(sql), database);
  if (problem) throw new PlatformSetupError("extension_missing", problem);
  try {
    await sql.begin(async (tx) => {
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended('vecsync:platform-setup', 0))");
      const [exists] = await tx.unsafe("SELECT 1 FROM pg_namespace WHERE nspname = $1::text", [PLATFORM_SCHEMA]);
      if (!exists) await tx.unsafe(`CREATE SCHEMA ${PLATFORM_SCHEMA}`);
    });
  } catch (err) {
    throw privilegeError(err, database) ?? err;
  }
}

/** SQLSTATE classes worth a retry: connection (08), rollback (40), resources (53), operator (57). */
export function driverError(e: unknown): DriverError {
  const code = sqlState(e);
  const isSqlState = /^[0-9A-Z]{5}$/.test(code);
  const retryable = !isSqlState || ["08", "40", "53", "57"].includes(code.slice(0, 2));
  const message = e instanceof Error ? e.message : String(e);
  return new DriverError(`platform vector store: ${message}`, { retryable, cause: e, context: code ? { sqlstate: code } : {} });
}
