// The fake warehouse's database: one in-memory DuckDB holding one database (catalog) with one
// schema PUBLIC, Snowflake's INFORMATION_SCHEMA views over DuckDB's catalog, a few macros for
// Snowflake functions, and change tracking emulated by table snapshots (changes.ts). Statements
// run one at a time (a mutex), so an admin script's BEGIN … COMMIT never interleaves with a query.
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { ChangeTracker, parseChangesClause } from "./changes.ts";
import { MERGE, mergeCounts, REF, splitCreateComment, SWAP, swapStatements, tableKey, type TableKey } from "./ddl.ts";
import { countsResult, encodeResult, type EncodedResult } from "./encode.ts";
import { objectMissing, WarehouseSqlError } from "./errors.ts";
import { literal, splitStatements, SqlSyntaxError, translate, type Bind } from "./sql.ts";

const DML = new RegExp(String.raw`^(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+${REF}`);
const CREATE = new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${REF}`);
const DROP = new RegExp(String.raw`^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${REF}`);
const ALTER_SET = new RegExp(String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?${REF}\s+SET\s+(CHANGE_TRACKING|DATA_RETENTION_TIME_IN_DAYS)\s*=\s*(\w+)\s*$`);

/** The last part of a possibly qualified name, unquoted: `"PUBLIC"."ITEMS"` → ITEMS. */
export const tableName = (ref: string) => ref.split(".").at(-1)!.trim().replace(/^"|"$/g, "");

const STATEMENT_TYPES = { select: 0x1000, insert: 0x3100, update: 0x3200, delete: 0x3300, merge: 0x3400, ddl: 0x6000, session: 0x4000 } as const;

const keyText = (key: TableKey) => JSON.stringify([key.schema, key.name]);


export class WarehouseEngine {
  readonly tracker: ChangeTracker;
  private queue: Promise<unknown> = Promise.resolve();
  private lastMicros = 0n;
  private inTransaction = false;
  private touchedInTransaction = new Map<string, TableKey>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly db: DuckDBConnection,
    readonly database: string,
  ) {
    this.tracker = new ChangeTracker(db, () => this.nowMicros());
  }

  static async create(database: string): Promise<WarehouseEngine> {
    const instance = await DuckDBInstance.create(":memory:");
    const db = await instance.connect();
    const engine = new WarehouseEngine(instance, db, database);
    await engine.setUp();
    return engine;
  }

  private async setUp() {
    const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
    const dbName = this.database.replaceAll("'", "''");
    for (const statement of [
      "SET TimeZone = 'UTC'",
      `ATTACH ':memory:' AS ${q(this.database)}`,
      `CREATE SCHEMA ${q(this.database)}."PUBLIC"`,
      `USE ${q(this.database)}."PUBLIC"`,
      "CREATE TABLE memory.main.SF_TABLE_META (TABLE_SCHEMA VARCHAR, TABLE_NAME VARCHAR, CREATED TIMESTAMPTZ, LAST_ALTERED TIMESTAMPTZ, PRIMARY KEY (TABLE_SCHEMA, TABLE_NAME))",
      "CREATE TEMP MACRO PARSE_JSON(x) AS CAST(x AS JSON)",
      "CREATE TEMP MACRO SHA2(x, bits := 256) AS sha256(CAST(x AS VARCHAR))",
      "CREATE TEMP MACRO IFF(c, a, b) AS CASE WHEN c THEN a ELSE b END",
      "CREATE TEMP MACRO TO_VARCHAR(x) AS CAST(x AS VARCHAR)",
      "CREATE TEMP MACRO VECTOR_COSINE_SIMILARITY(a, b) AS array_cosine_similarity(a, b)",
      "CREATE TEMP MACRO VECTOR_INNER_PRODUCT(a, b) AS array_inner_product(a, b)",
      "CREATE TEMP MACRO VECTOR_L2_DISTANCE(a, b) AS array_distance(a, b)",
      ...[768, 1024].map(
        (n) => `CREATE TEMP MACRO SF_EMBED_TEXT_${n}(model, txt) AS
          CAST(CASE WHEN txt IS NOT NULL THEN list_transform(range(${n}), i -> CAST(hash(model || ':' || txt || ':' || i) % 2001 AS FLOAT) / 1000 - 1) END AS FLOAT[${n}])`,
      ),
      `CREATE TEMP VIEW SF_INFO_COLUMNS AS SELECT table_catalog AS TABLE_CATALOG, table_schema AS TABLE_SCHEMA,
         table_name AS TABLE_NAME, column_name AS COLUMN_NAME, ordinal_position AS ORDINAL_POSITION,
         is_nullable AS IS_NULLABLE, CASE
           WHEN data_type LIKE 'DECIMAL%' OR data_type IN ('TINYINT','SMALLINT','INTEGER','BIGINT','HUGEINT') THEN 'NUMBER'
           WHEN data_type LIKE 'VARCHAR%' THEN 'TEXT'
           WHEN data_type IN ('DOUBLE', 'FLOAT') THEN 'FLOAT'
           WHEN data_type = 'TIMESTAMP' THEN 'TIMESTAMP_NTZ'
           WHEN data_type = 'TIMESTAMP WITH TIME ZONE' THEN 'TIMESTAMP_LTZ'
           WHEN data_type = 'JSON' THEN 'VARIANT'
           WHEN data_type = 'BLOB' THEN 'BINARY'
           WHEN data_type LIKE '%]' THEN 'VECTOR'
           ELSE data_type END AS DATA_TYPE,
         numeric_precision AS NUMERIC_PRECISION, numeric_scale AS NUMERIC_SCALE
       FROM information_schema.columns WHERE table_catalog = '${dbName}'`,
      `CREATE TEMP VIEW SF_INFO_SCHEMATA AS SELECT catalog_name AS CATALOG_NAME, schema_name AS SCHEMA_NAME
       FROM information_schema.schemata WHERE catalog_name = '${dbName}'`,
      `CREATE TEMP VIEW SF_INFO_TABLES AS SELECT t.table_catalog AS TABLE_CATALOG, t.table_schema AS TABLE_SCHEMA,
         t.table_name AS TABLE_NAME, CASE WHEN t.table_type = 'BASE TABLE' THEN 'BASE TABLE' ELSE 'VIEW' END AS TABLE_TYPE,
         m.CREATED AS CREATED, m.LAST_ALTERED AS LAST_ALTERED, t.TABLE_COMMENT AS COMMENT
       FROM information_schema.tables t LEFT JOIN memory.main.SF_TABLE_META m ON m.TABLE_SCHEMA = t.table_schema AND m.TABLE_NAME = t.table_name
       WHERE t.table_catalog = '${dbName}'`,
    ]) {
      await this.db.run(statement);
    }
  }

  /** Strictly increasing microseconds since the epoch: commit times and CURRENT_TIMESTAMP(). */
  nowMicros(): bigint {
    const now = BigInt(Date.now()) * 1000n;
    this.lastMicros = now > this.lastMicros ? now : this.lastMicros + 1n;
    return this.lastMicros;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** One statement from a client session (binds as the driver sends them). */
  query(sqlText: string, binds: Record<string, Bind> = {}, session?: Map<string, string>): Promise<EncodedResult> {
    return this.serial(() => this.statement(sqlText, binds, session));
  }

  /** The admin API: a script of `;`-separated statements, BEGIN … COMMIT included. */
  exec(script: string): Promise<void> {
    return this.serial(async () => {
      for (const statement of splitStatements(script)) await this.statement(statement, {});
    });
  }

  private async statement(sqlText: string, binds: Record<string, Bind>, session?: Map<string, string>): Promise<EncodedResult> {
    const now = this.nowMicros();
    let sql: string;
    try {
      sql = translate(sqlText, binds, new Date(Number(now / 1000n)).toISOString()).trim();
    } catch (err) {
      if (err instanceof SqlSyntaxError) throw new WarehouseSqlError("001003", `SQL compilation error:\nsyntax error: ${err.message}`, "42000");
      throw err;
    }
    const head = sql.replace(/^\(+/, "");
    if (/^(BEGIN|START\s+TRANSACTION)\b/.test(head)) return this.transaction("BEGIN");
    if (/^COMMIT\b/.test(head)) return this.transaction("COMMIT");
    if (/^ROLLBACK\b/.test(head)) return this.transaction("ROLLBACK");
    if (/^ALTER\s+SESSION\s+/.test(head)) return this.alterSession(head, session);
    if (/^USE\s+/.test(head)) return this.status(STATEMENT_TYPES.session, "Statement executed successfully.");
    const alter = ALTER_SET.exec(head);
    if (alter) return this.alterTable(tableName(alter[1]!), alter[2]!, alter[3]!);
    const swap = SWAP.exec(head);
    if (swap) return this.swap(tableKey(swap[1]!), tableKey(swap[2]!));
    const merge = MERGE.exec(head);
    if (merge) return this.merge(sql, tableKey(merge[1]!));

    const changes = parseChangesClause(sql);
    if (changes) sql = await this.tracker.rewrite(sql, changes);
    const created = CREATE.exec(head);
    const withComment = created ? splitCreateComment(sql, created[1]!) : null;
    const result = withComment ? (await this.run(withComment[0]!), await this.run(withComment[1]!)) : await this.run(sql);
    const dml = DML.exec(head);
    const dropped = DROP.exec(head);
    if (dml) {
      await this.touched(tableKey(dml[2]!));
      const verb = dml[1]!.split(/\s/)[0]!.toLowerCase();
      const kind = verb === "insert" ? "insert" : verb === "update" ? "update" : "delete";
      return encodeResult(result.columns, result.rows, { statementTypeId: STATEMENT_TYPES[kind], countColumn: `number of rows ${kind === "insert" ? "inserted" : kind === "update" ? "updated" : "deleted"}` });
    }
    if (created) {
      const key = tableKey(created[1]!);
      await this.tracker.forget(key.name);
      await this.touched(key, true);
      return this.status(STATEMENT_TYPES.ddl, `Table ${key.name} successfully created.`);
    }
    if (dropped) {
      const key = tableKey(dropped[1]!);
      await this.tracker.forget(key.name);
      await this.db.run(`DELETE FROM memory.main.SF_TABLE_META WHERE TABLE_SCHEMA = ${literal(key.schema)} AND TABLE_NAME = ${literal(key.name)}`);
      return this.status(STATEMENT_TYPES.ddl, `${key.name} successfully dropped.`);
    }
    return encodeResult(result.columns, result.rows, { statementTypeId: /^(SELECT|WITH)\b/.test(head) ? STATEMENT_TYPES.select : STATEMENT_TYPES.ddl });
  }

  private async run(sql: string) {
    try {
      const reader = await this.db.runAndReadAll(sql);
      return { columns: reader.columnNames().map((name, i) => ({ name, type: reader.columnTypes()[i]! })), rows: reader.getRows() };
    } catch (err) {
      throw fromDuckDb(err);
    }
  }

  /** Bumps LAST_ALTERED and records a change-tracking version (at COMMIT inside a transaction). */
  private async touched(key: TableKey, created = false) {
    // DuckDB lets one transaction write one attached database: the metadata waits for COMMIT.
    if (this.inTransaction && !created) {
      this.touchedInTransaction.set(keyText(key), key);
      return;
    }
    const micros = this.nowMicros();
    const at = `make_timestamp(${micros}::BIGINT)::TIMESTAMPTZ`;
    const where = `TABLE_SCHEMA = ${literal(key.schema)} AND TABLE_NAME = ${literal(key.name)}`;
    if (created) await this.db.run(`INSERT OR REPLACE INTO memory.main.SF_TABLE_META VALUES (${literal(key.schema)}, ${literal(key.name)}, ${at}, ${at})`);
    else await this.db.run(`UPDATE memory.main.SF_TABLE_META SET LAST_ALTERED = ${at} WHERE ${where}`);
    await this.tracker.recordVersion(key.name, micros);
  }

  /** `ALTER TABLE a SWAP WITH b`: renames in one transaction; the catalog times go with the tables. */
  private async swap(a: TableKey, b: TableKey) {
    for (const key of [a, b]) {
      const found = await this.run(`SELECT 1 FROM SF_INFO_TABLES WHERE TABLE_SCHEMA = ${literal(key.schema)} AND TABLE_NAME = ${literal(key.name)}`);
      if (found.rows.length === 0) throw objectMissing(key.name);
    }
    const own = !this.inTransaction;
    if (own) await this.run("BEGIN TRANSACTION");
    try {
      for (const statement of swapStatements(this.database, a, b)) await this.run(statement);
      if (own) await this.run("COMMIT");
    } catch (err) {
      if (own) await this.run("ROLLBACK");
      throw err;
    }
    const meta = "memory.main.SF_TABLE_META";
    const at = (key: TableKey) => `TABLE_SCHEMA = ${literal(key.schema)} AND TABLE_NAME = ${literal(key.name)}`;
    await this.db.run(`UPDATE ${meta} SET TABLE_NAME = '__fake_swap__' WHERE ${at(a)}`);
    await this.db.run(`UPDATE ${meta} SET TABLE_NAME = ${literal(a.name)} WHERE ${at(b)}`);
    await this.db.run(`UPDATE ${meta} SET TABLE_NAME = ${literal(b.name)} WHERE TABLE_SCHEMA = ${literal(a.schema)} AND TABLE_NAME = '__fake_swap__'`);
    for (const key of [a, b]) await this.tracker.forget(key.name);
    return this.status(STATEMENT_TYPES.ddl, "Statement executed successfully.");
  }

  private async merge(sql: string, key: TableKey) {
    const result = await this.run(`${sql} RETURNING merge_action`);
    await this.touched(key);
    const { columns, row } = mergeCounts(sql, result.rows);
    return countsResult(STATEMENT_TYPES.merge, columns, row);
  }

  private async transaction(verb: "BEGIN" | "COMMIT" | "ROLLBACK") {
    await this.run(verb === "BEGIN" ? "BEGIN TRANSACTION" : verb);
    this.inTransaction = verb === "BEGIN";
    if (verb !== "BEGIN") {
      const touched = [...this.touchedInTransaction.values()];
      this.touchedInTransaction.clear();
      if (verb === "COMMIT") for (const key of touched) await this.touched(key);
    }
    return this.status(STATEMENT_TYPES.session, "Statement executed successfully.");
  }

  private alterSession(sql: string, session?: Map<string, string>) {
    const body = sql.replace(/^ALTER\s+SESSION\s+/, "");
    const unset = /^UNSET\b/.test(body);
    for (const m of body.replace(/^(UN)?SET\s+/, "").matchAll(/([A-Z_][A-Z0-9_]*)\s*(?:=\s*('(?:[^']|'')*'|[^\s,]+))?/g)) {
      if (unset) session?.delete(m[1]!);
      else if (m[2] !== undefined) session?.set(m[1]!, m[2].replace(/^'|'$/g, "").replaceAll("''", "'"));
    }
    return this.status(STATEMENT_TYPES.session, "Statement executed successfully.");
  }

  private async alterTable(name: string, property: string, value: string) {
    const exists = await this.run(`SELECT 1 FROM SF_INFO_TABLES WHERE TABLE_NAME = '${name.replaceAll("'", "''")}'`);
    if (exists.rows.length === 0) throw objectMissing(name);
    if (property === "CHANGE_TRACKING") await this.tracker.setTracking(name, value === "TRUE");
    else if (Number(value) === 0) this.tracker.purgeHistory(name);
    return this.status(STATEMENT_TYPES.ddl, "Statement executed successfully.");
  }

  private status(statementTypeId: number, message: string): EncodedResult {
    return { statementTypeId, rowtype: [{ name: "status", type: "text", nullable: true, scale: null, precision: null, length: 16777216, byteLength: 16777216, database: "", schema: "", table: "", collation: null }], rows: [[message]] };
  }

  async close() {
    this.db.closeSync();
    this.instance.closeSync();
  }
}

/** DuckDB's error classes → the Snowflake codes the driver acts on (002003, 000904, 001003). */
function fromDuckDb(err: unknown): Error {
  if (err instanceof WarehouseSqlError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const table = /Table with name (\S+) does not exist/.exec(message);
  if (table) return objectMissing(table[1]!.replace(/^"|"$/g, ""));
  const column = /Referenced column "?([^"\s]+)"? not found|column "?([^"\s]+)"? (?:not found|does not exist)/i.exec(message);
  if (column) return new WarehouseSqlError("000904", `SQL compilation error: error line 1 at position 0\ninvalid identifier '${column[1] ?? column[2]}'`, "42000");
  if (/^Parser Error/.test(message)) return new WarehouseSqlError("001003", `SQL compilation error:\n${message}`, "42000");
  // Not a real Snowflake code: everything else keeps DuckDB's words (see README.md).
  return new WarehouseSqlError("100000", message, "XX000");
}
