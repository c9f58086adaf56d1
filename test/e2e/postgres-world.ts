// The world of the Postgres end-to-end tests: the real process, a throwaway Postgres database
// seeded with `docs`, an organization signed up over HTTP, a connection to the database and a
// `local` embedding provider, all made through the API. `mode: "platform"`: the connection keeps
// the vectors in the database itself (pgvector, installed in it first).
import { PG_ADMIN_URL, throwawayPostgres, type RunningProcess, type ThrowawayDatabase } from "../harness.ts";
import { must, signUp, startService, type Api, type Column, type Row } from "./helpers.ts";
import { COLUMNS, seedRows } from "./source.ts";

export type PgWorld = {
  proc: RunningProcess;
  pg: ThrowawayDatabase;
  api: Api;
  orgId: string;
  connectionId: string;
  providerId: string;
  readRows(): Promise<Row[]>;
} & AsyncDisposable;

export async function openPgWorld(env: Record<string, string> = {}, opts: { mode?: "managed" | "platform" } = {}): Promise<PgWorld> {
  const mode = opts.mode ?? "managed";
  const pg = await throwawayPostgres();
  if (mode === "platform") await pg.sql`CREATE EXTENSION vector`;
  await pg.sql`CREATE TABLE docs (id integer PRIMARY KEY, title text, body text, category varchar(40), price double precision, stock integer, active boolean, code text)`;
  await pg.sql`INSERT INTO docs ${pg.sql(seedRows())}`;
  const proc = await startService(env);
  const { api, orgId } = await signUp(proc);
  const admin = new URL(PG_ADMIN_URL);
  const credentials = { host: "127.0.0.1", port: Number(admin.port || 5432), database: pg.name, user: admin.username || "postgres", password: "unused-trust-auth", ssl_mode: "disable" };
  const connection = must(await api.call("POST", "/v1/providers/db_relational/connections", { name: "source", mode, credentials }), 201);
  const tested = must(await api.call("POST", `/v1/connections/${connection.id}/test`), 200);
  if (tested.status !== "connected") throw new Error(`connection test: ${JSON.stringify(tested)}`);
  const provider = must(await api.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" }), 201);
  return {
    proc,
    pg,
    api,
    orgId,
    connectionId: connection.id,
    providerId: provider.id,
    readRows: () => pg.sql`SELECT * FROM docs ORDER BY id` as Promise<Row[]>,
    async [Symbol.asyncDispose]() {
      await proc[Symbol.asyncDispose]();
      await pg[Symbol.asyncDispose]();
    },
  };
}

export const tableBody = (w: PgWorld, over: { name?: string; sync_mode?: "batch" | "cdc"; columns?: Column[]; embedding_dimensions?: number } = {}) => ({
  name: over.name ?? "docs",
  connection_id: w.connectionId,
  embedding_provider_id: w.providerId,
  source_table: "docs",
  primary_key_column: "id",
  columns: over.columns ?? COLUMNS,
  embedding_model: "local-lexical-v1",
  embedding_dimensions: over.embedding_dimensions ?? 64,
  sync_mode: over.sync_mode ?? "batch",
});

/** Creates a vector table, backfills it and waits for `synced` with every row counted. */
export async function createAndBackfill(w: PgWorld, body: ReturnType<typeof tableBody>): Promise<any> {
  const table = must(await w.api.call("POST", "/v1/vector-tables", body), 201);
  const started = must(await w.api.call("POST", `/v1/vector-tables/${table.id}/backfill`), 200);
  if (started.status !== "backfilling") throw new Error(`backfill answered ${JSON.stringify(started)}`);
  return table;
}
