// The Postgres source driver (postgres.js). Reads go page by page in primary-key order (keyset,
// never OFFSET); hashes are computed by the server so only 32 hex digits a row cross the wire.
// CDC (logical replication) lives in postgres-cdc.ts behind the same connector.
import { prepareCdc, openChanges, teardownCdc } from "./postgres-cdc.ts";
import { connect, type PostgresCredentials, type PostgresSourceOptions, type SourceSql } from "./postgres-connect.ts";
import { toDriverError } from "./postgres-errors.ts";
import { exactTableName, fetchStatement, hashStatement, keyHashStatement, quoteIdent, scanStatement, selectColumns, type Statement, type TableRef } from "./postgres-sql.ts";
import {
  SourceObjectNotFoundError,
  checkPage,
  FETCH_CHUNK,
  type CdcTarget,
  type ChangeStream,
  type FetchRequest,
  type HashRequest,
  type Key,
  type KeyHashRequest,
  type KeyValue,
  type RowHash,
  type ScanRequest,
  type SourceColumn,
  type SourceConnector,
  type SourceRow,
  type SourceValue,
} from "./types.ts";

export type { PostgresCredentials, PostgresSourceOptions } from "./postgres-connect.ts";

/** Bump when the hash formula or the pinned session settings change: stored hashes go stale. */
export const POSTGRES_HASH_ALGORITHM = "pg-md5-row-v1";


export class PostgresSource implements SourceConnector {
  readonly hashAlgorithm = POSTGRES_HASH_ALGORITHM;
  readonly credentials: PostgresCredentials;
  readonly options: PostgresSourceOptions;
  private readonly sql: SourceSql;
  private readonly tables = new Map<string, TableRef>();

  constructor(credentials: PostgresCredentials, options: PostgresSourceOptions = {}) {
    this.credentials = credentials;
    this.options = options;
    this.sql = connect(credentials, options);
  }

  /** Runs `fn`, turning any failure into a DriverError with the database's words. */
  async run<T>(operation: string, fn: (sql: SourceSql) => Promise<T>): Promise<T> {
    try {
      return await fn(this.sql);
    } catch (err) {
      throw toDriverError(err, { password: this.credentials.password, operation });
    }
  }

  private rows(statement: Statement): Promise<SourceValue[][]> {
    return this.sql.unsafe(statement.text, statement.params, { prepare: true }).values() as Promise<SourceValue[][]>;
  }

  async test(): Promise<{ latencyMs: number }> {
    const started = performance.now();
    await this.run("test", (sql) => sql`SELECT 1`);
    return { latencyMs: Math.max(0, Math.round(performance.now() - started)) };
  }

  /** The table a user's name means: taken literally first, then with Postgres' case folding. */
  async resolveTable(table: string): Promise<TableRef & { oid: number }> {
    const cached = this.tables.get(table);
    if (cached) return cached as TableRef & { oid: number };
    const found = await this.run(`resolve ${table}`, async (sql) => {
      for (const spelling of [exactTableName(table), table]) {
        const rows = await sql<{ oid: number; schema: string; name: string }[]>`
          SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.oid = to_regclass(${spelling}) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`.catch(unparsableName);
        if (rows[0]) return rows[0];
      }
      return null;
    });
    if (!found) throw new SourceObjectNotFoundError("table", `table ${JSON.stringify(table)} does not exist`);
    const ref = { ...found, sql: `${quoteIdent(found.schema)}.${quoteIdent(found.name)}` };
    this.tables.set(table, ref);
    return ref;
  }

  async describeTable(table: string): Promise<SourceColumn[]> {
    const ref = await this.resolveTable(table);
    const rows = await this.run(`describe ${table}`, (sql) => sql<{ name: string; type: string; nullable: boolean }[]>`
      SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
             NOT (a.attnotnull OR coalesce(a.attnum = ANY(i.indkey), false)) AS nullable
      FROM pg_attribute a
      LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
      WHERE a.attrelid = ${ref.oid} AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`);
    return rows.map((r) => ({ name: r.name, type: r.type, nullable: r.nullable }));
  }

  async count(table: string): Promise<number> {
    const ref = await this.resolveTable(table);
    const [row] = await this.run(`count ${table}`, (sql) => sql.unsafe(`SELECT count(*) AS n FROM ${ref.sql}`));
    return Number(row?.n ?? 0);
  }

  async scan({ table, pk, columns, afterPk, limit }: ScanRequest): Promise<SourceRow[]> {
    checkPage(pk, limit);
    const ref = await this.resolveTable(table);
    const names = selectColumns(pk, columns);
    const rows = await this.run(`scan ${table}`, () => this.rows(scanStatement(ref, pk, columns, afterPk, limit)));
    return rows.map((values) => toRow(names, pk.length, values));
  }

  async hashes({ table, pk, textColumns, metaColumns, afterPk, limit }: HashRequest): Promise<RowHash[]> {
    checkPage(pk, limit);
    const ref = await this.resolveTable(table);
    const statement = hashStatement(ref, pk, textColumns, metaColumns, afterPk, limit);
    const rows = await this.run(`hash ${table}`, () => this.rows(statement));
    return rows.map((r) => toHash(pk.length, r));
  }

  async hashesByKeys({ table, pk, textColumns, metaColumns, keys }: KeyHashRequest): Promise<RowHash[]> {
    checkPage(pk, 1);
    if (keys.length === 0) return [];
    const ref = await this.resolveTable(table);
    const found: RowHash[] = [];
    for (let i = 0; i < keys.length; i += FETCH_CHUNK) {
      const statement = keyHashStatement(ref, pk, textColumns, metaColumns, keys.slice(i, i + FETCH_CHUNK));
      const rows = await this.run(`hash ${table}`, () => this.rows(statement));
      for (const r of rows) found.push(toHash(pk.length, r));
    }
    return found;
  }

  async fetchByKeys({ table, pk, columns, keys, textLimit }: FetchRequest): Promise<SourceRow[]> {
    checkPage(pk, 1);
    if (keys.length === 0) return [];
    const ref = await this.resolveTable(table);
    const names = selectColumns(pk, columns);
    const limited = textLimit !== undefined && textLimit.columns.length > 0;
    const found: SourceRow[] = [];
    for (let i = 0; i < keys.length; i += FETCH_CHUNK) {
      const statement = fetchStatement(ref, pk, columns, keys.slice(i, i + FETCH_CHUNK), textLimit);
      const rows = await this.run(`fetch ${table}`, () => this.rows(statement));
      for (const values of rows) {
        const row = toRow(names, pk.length, values);
        const bytes = limited ? values[names.length] : null; // the statement's last column
        found.push(bytes === null || bytes === undefined ? row : { ...row, textBytes: Number(bytes) });
      }
    }
    return found;
  }

  prepareCdc(target: CdcTarget): Promise<{ checkpoint: string }> {
    return prepareCdc(this, target);
  }

  changes(target: CdcTarget, checkpoint: string): Promise<ChangeStream> {
    return openChanges(this, target, checkpoint);
  }

  teardownCdc(target: CdcTarget): Promise<void> {
    return teardownCdc(this, target);
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

/** to_regclass rejects some spellings (`a.b.c.d`) with a syntax error: that name is not a table. */
function unparsableName(err: { code?: string }): never[] {
  if (err.code?.startsWith("42") || err.code === "3F000") return [];
  throw err;
}

function toHash(keyLength: number, r: SourceValue[]): RowHash {
  return { key: r.slice(0, keyLength) as Key, textHash: r[keyLength] as string, metaHash: r[keyLength + 1] as string };
}

function toRow(names: string[], keyLength: number, values: SourceValue[]): SourceRow {
  const record: Record<string, SourceValue> = {};
  names.forEach((name, i) => (record[name] = values[i] ?? null));
  return { key: values.slice(0, keyLength) as KeyValue[], values: record };
}

export function createPostgresSource(credentials: PostgresCredentials, options: PostgresSourceOptions = {}): SourceConnector {
  return new PostgresSource(credentials, options);
}
