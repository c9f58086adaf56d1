// The cloud warehouse source driver (snowflake-sdk). Reads go page by page in primary-key order
// with a key checkpoint (the warehouse has no indexes to seek: callers should ask for large
// pages); hashes are computed by the warehouse so only 32 hex digits a row cross the wire.
// Change feeds (CHANGES clause over change tracking) live in warehouse-cdc.ts.
//
// Names: the warehouse folds unquoted identifiers to upper case, so a user's `items`/`title`
// means ITEMS/TITLE unless a table or column is spelled exactly that way (exact match first).
// describeTable answers the catalog's own spelling.
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
  type RowHash,
  type ScanRequest,
  type SourceColumn,
  type SourceConnector,
  type SourceRow,
} from "./types.ts";
import { openChanges, prepareCdc, type CdcHost } from "./warehouse-cdc.ts";
import { WarehouseClient, type QueryResult, type WarehouseCredentials, type WarehouseSourceOptions } from "./warehouse-connect.ts";
import { fetchStatement, hashStatement, keyHashStatement, quoteIdent, scanStatement, toSourceValue, type BindValue, type Statement, type TableRef } from "./warehouse-sql.ts";

export type { WarehouseCredentials, WarehouseSourceOptions } from "./warehouse-connect.ts";

/** Bump when the hash formula or the pinned session settings change: stored hashes go stale. */
export const WAREHOUSE_HASH_ALGORITHM = "wh-sha2-128-v1";


interface ResolvedTable extends TableRef {
  columns: SourceColumn[];
}

export class WarehouseSource implements SourceConnector, CdcHost {
  readonly hashAlgorithm = WAREHOUSE_HASH_ALGORITHM;
  readonly pollMs: number;
  readonly maxChangedKeys: number;
  private readonly client: WarehouseClient;
  private readonly tables = new Map<string, ResolvedTable>();

  constructor(
    readonly credentials: WarehouseCredentials,
    options: WarehouseSourceOptions = {},
  ) {
    this.client = new WarehouseClient(credentials, options.url ? new URL(options.url) : null);
    this.pollMs = options.pollMs ?? 1000;
    this.maxChangedKeys = options.maxChangedKeys ?? 10_000;
  }

  run(sql: string, binds: BindValue[], operation: string): Promise<QueryResult> {
    return this.client.execute(sql, binds, operation);
  }

  private async rows(statement: Statement, operation: string, table: string) {
    try {
      return await this.run(statement.text, statement.binds, operation);
    } catch (err) {
      if (err instanceof SourceObjectNotFoundError) this.tables.delete(table); // dropped or altered since
      throw err;
    }
  }

  async test(): Promise<{ latencyMs: number }> {
    const started = performance.now();
    await this.run("SELECT 1", [], "test");
    return { latencyMs: Math.max(0, Math.round(performance.now() - started)) };
  }

  /** `table` or `schema.table`; each part taken literally first, then upper-cased. */
  async resolveTable(table: string): Promise<ResolvedTable> {
    const cached = this.tables.get(table);
    if (cached) return cached;
    const parts = table.split(".");
    if (parts.length > 2 || parts.some((p) => p === "")) throw new SourceObjectNotFoundError("table", `table ${JSON.stringify(table)} does not exist`);
    const name = parts.at(-1)!;
    const schema = parts.length === 2 ? parts[0]! : (this.credentials.schema ?? "PUBLIC");
    const result = await this.run(
      `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM INFORMATION_SCHEMA.COLUMNS
       WHERE TABLE_SCHEMA IN (?, ?) AND TABLE_NAME IN (?, ?) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      [schema, schema.toUpperCase(), name, name.toUpperCase()],
      `describe ${table}`,
    );
    const rows = result.rows.map((r) => r.map(String));
    const rank = (s: string, n: string) => (s === schema ? 0 : 2) + (n === name ? 0 : 1);
    const best = rows.map((r) => rank(r[0]!, r[1]!)).reduce((a, b) => Math.min(a, b), Infinity);
    const chosen = rows.filter((r) => rank(r[0]!, r[1]!) === best);
    if (chosen.length === 0) throw new SourceObjectNotFoundError("table", `table ${JSON.stringify(table)} does not exist or is not authorized`);
    const [found] = chosen;
    const ref: ResolvedTable = {
      schema: found![0]!,
      name: found![1]!,
      sql: `${quoteIdent(found![0]!)}.${quoteIdent(found![1]!)}`,
      columns: chosen.map((r) => ({ name: r[2]!, type: r[3]!, nullable: r[4] === "YES" })),
    };
    this.tables.set(table, ref);
    return ref;
  }

  /**
   * Columns in table order with INFORMATION_SCHEMA's DATA_TYPE. The warehouse enforces no primary
   * key; a declared one is NOT NULL there. A caller that knows the key passes it to have those
   * columns reported `nullable: false` whatever the catalog says.
   */
  async describeTable(table: string, pk: string[] = []): Promise<SourceColumn[]> {
    this.tables.delete(table);
    const ref = await this.resolveTable(table);
    const keyColumns = new Set(pk.map((c) => this.columnIn(ref, c)));
    return ref.columns.map((c) => (keyColumns.has(c.name) ? { ...c, nullable: false } : c));
  }

  private columnIn(ref: ResolvedTable, column: string): string {
    const exact = ref.columns.find((c) => c.name === column);
    const folded = exact ?? ref.columns.find((c) => c.name === column.toUpperCase());
    if (!folded) throw new SourceObjectNotFoundError("column", `column ${JSON.stringify(column)} does not exist in ${ref.schema}.${ref.name}`);
    return folded.name;
  }

  /** The catalog names of the caller's columns; a miss re-reads the catalog once (a new column). */
  private async columnsOf(table: string, names: string[]): Promise<{ ref: ResolvedTable; columns: string[] }> {
    let ref = await this.resolveTable(table);
    try {
      return { ref, columns: names.map((n) => this.columnIn(ref, n)) };
    } catch (err) {
      if (!(err instanceof SourceObjectNotFoundError)) throw err;
      this.tables.delete(table);
      ref = await this.resolveTable(table);
      return { ref, columns: names.map((n) => this.columnIn(ref, n)) };
    }
  }

  async count(table: string): Promise<number> {
    const ref = await this.resolveTable(table);
    const result = await this.rows({ text: `SELECT COUNT(*) FROM ${ref.sql}`, binds: [] }, `count ${table}`, table);
    return Number(result.rows[0]?.[0] ?? 0);
  }

  async scan({ table, pk, columns, afterPk, limit }: ScanRequest): Promise<SourceRow[]> {
    checkPage(pk, limit);
    const { ref, columns: names } = await this.columnsOf(table, [...pk, ...columns]);
    const statement = scanStatement(ref, names.slice(0, pk.length), names.slice(pk.length), afterPk, limit);
    const result = await this.rows(statement, `scan ${table}`, table);
    return result.rows.map((row) => toRow(result, row, [...pk, ...columns], pk.length));
  }

  async hashes({ table, pk, textColumns, metaColumns, afterPk, limit }: HashRequest): Promise<RowHash[]> {
    checkPage(pk, limit);
    const { ref, names } = await this.hashColumns(table, pk, textColumns, metaColumns);
    const result = await this.rows(hashStatement(ref, names.pk, names.text, names.meta, afterPk, limit), `hash ${table}`, table);
    return result.rows.map((row) => toHash(result, row, pk.length));
  }

  async hashesByKeys({ table, pk, textColumns, metaColumns, keys }: KeyHashRequest): Promise<RowHash[]> {
    checkPage(pk, 1);
    if (keys.length === 0) return [];
    const { ref, names } = await this.hashColumns(table, pk, textColumns, metaColumns);
    const found: RowHash[] = [];
    for (let i = 0; i < keys.length; i += FETCH_CHUNK) {
      const statement = keyHashStatement(ref, names.pk, names.text, names.meta, keys.slice(i, i + FETCH_CHUNK));
      const result = await this.rows(statement, `hash ${table}`, table);
      for (const row of result.rows) found.push(toHash(result, row, pk.length));
    }
    return found;
  }

  private async hashColumns(table: string, pk: string[], textColumns: string[], metaColumns: string[]) {
    const { ref, columns: all } = await this.columnsOf(table, [...pk, ...textColumns, ...metaColumns]);
    const n = pk.length;
    return { ref, names: { pk: all.slice(0, n), text: all.slice(n, n + textColumns.length), meta: all.slice(n + textColumns.length) } };
  }

  async fetchByKeys({ table, pk, columns, keys }: FetchRequest): Promise<SourceRow[]> {
    checkPage(pk, 1);
    if (keys.length === 0) return [];
    const { ref, columns: names } = await this.columnsOf(table, [...pk, ...columns]);
    const found: SourceRow[] = [];
    for (let i = 0; i < keys.length; i += FETCH_CHUNK) {
      const statement = fetchStatement(ref, names.slice(0, pk.length), names.slice(pk.length), keys.slice(i, i + FETCH_CHUNK));
      const result = await this.rows(statement, `fetch ${table}`, table);
      for (const row of result.rows) found.push(toRow(result, row, [...pk, ...columns], pk.length));
    }
    return found;
  }

  prepareCdc(target: CdcTarget): Promise<{ checkpoint: string }> {
    return prepareCdc(this, target);
  }

  async changes(target: CdcTarget, checkpoint: string): Promise<ChangeStream> {
    const { columns } = await this.columnsOf(target.table, target.pk);
    return openChanges(this, { ...target, pk: columns }, checkpoint);
  }

  /**
   * Leaves change tracking on: it is a property of the table shared by every feed (and by the
   * customer's own streams) on it, costs little, and turning it off would break the other
   * vector tables syncing the same table. Nothing per-target is kept at the source.
   */
  async teardownCdc(_target: CdcTarget): Promise<void> {}

  async close(): Promise<void> {
    await this.client.close();
  }
}

function toHash(result: QueryResult, row: unknown[], keyLength: number): RowHash {
  return {
    key: row.slice(0, keyLength).map((v, i) => toSourceValue(v, result.columns[i]!)) as Key,
    textHash: String(row[keyLength]),
    metaHash: String(row[keyLength + 1]),
  };
}

/** Values keyed by the caller's names (not the catalog's spelling), key first. */
function toRow(result: QueryResult, row: unknown[], names: string[], keyLength: number): SourceRow {
  const values: SourceRow["values"] = {};
  names.forEach((name, i) => (values[name] = toSourceValue(row[i], result.columns[i]!)));
  return { key: names.slice(0, keyLength).map((n) => values[n]) as Key, values };
}

export function createWarehouseSource(credentials: WarehouseCredentials, options: WarehouseSourceOptions = {}): SourceConnector {
  return new WarehouseSource(credentials, options);
}
