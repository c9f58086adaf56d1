// The platform-mode store on the warehouse: vectors in the customer's warehouse, in a table with
// a VECTOR(FLOAT, d) column in the schema VECSYNC of the connection's database (names and DDL:
// warehouse-schema.ts; search: warehouse-search.ts; built-in models: warehouse-embed.ts).
// Every write is one statement (MERGE or DELETE), atomic in the warehouse; DDL commits by itself
// there, so a re-backfill's swap is the warehouse's atomic `ALTER TABLE … SWAP WITH`. Calls on a
// ref are ordered in process by warehouse-lock.ts. See docs/platform-warehouse.md.
import { DriverError } from "../../shared/errors.ts";
import { WarehouseClient, type QueryResult, type WarehouseCredentials } from "../sources/warehouse-connect.ts";
import { parseFilter, VectorStoreError, type MetadataUpdate, type RowHashes, type SearchRequest, type UpsertRow } from "../vector-store/index.ts";
import { lastPerKey } from "./pgvector-rows.ts";
import type { HashesRequest, PlatformGenerations, PlatformSearchResult, PlatformTarget, PlatformVectorStore, StoredDoc } from "./types.ts";
import { embedMergeSql, sourceTextSelect, type EmbedResult, type EmbedRow, type SourceText } from "./warehouse-embed.ts";
import { compileWarehouse, type Bind } from "./warehouse-filters.ts";
import { RefLocks } from "./warehouse-lock.ts";
import { dmlCount, metadataValues, readKey, readVector, ROWS_PER_STATEMENT, upsertValues } from "./warehouse-rows.ts";
import {
  assertSpec,
  buildingTable,
  createTableSql,
  layoutOf,
  META_HASH_COLUMN,
  parseComment,
  parseRef,
  PLATFORM_SCHEMA,
  quoteIdent,
  sameSpec,
  schemaSql,
  tableSql,
  TEXT_COLUMN,
  TEXT_HASH_COLUMN,
  VECTOR_COLUMN,
  type ParsedRef,
  type TableComment,
  type WarehouseKeyColumn,
  type WarehouseSpec,
} from "./warehouse-schema.ts";
import { searchTable, type SearchQuery } from "./warehouse-search.ts";

export type { EmbedResult, EmbedRow, SourceText } from "./warehouse-embed.ts";
export type { WarehouseKeyColumn, WarehouseSpec } from "./warehouse-schema.ts";
export { warehouseVectorRef } from "./warehouse-schema.ts";

/** A search, optionally pinned: `generation` (from `generations()`) must still be live, else generation_not_found. */
export type WarehouseSearchRequest = SearchRequest & { generation?: number };
export type TextSearchRequest = Omit<WarehouseSearchRequest, "vector"> & { text: string };

/** The tables of one ref: the live one, its building generations, and leftovers of a broken swap. */
interface Family {
  ref: ParsedRef;
  live: TableComment | null;
  building: Map<number, TableComment>;
  /** Tables of the ref whose name does not match their comment (a swap whose DROP never ran). */
  stale: string[];
  /** The highest generation any table of the ref is named or commented with. */
  highest: number;
}

interface Resolved {
  table: string;
  spec: WarehouseSpec;
}

/** Opens the store with the connection's vetted credentials (host checks done by the caller). */
export function connectWarehouseStore(credentials: WarehouseCredentials, options: { url?: string | null } = {}): WarehouseVectorStore {
  return new WarehouseVectorStore(new WarehouseClient(credentials, options.url ? new URL(options.url) : null), { ownsClient: true });
}

export class WarehouseVectorStore implements PlatformVectorStore {
  private readonly locks = new RefLocks();
  private readonly ownsClient: boolean;

  /** One store per connection and process: the ref locks live in the instance. */
  constructor(
    private readonly client: WarehouseClient,
    opts: { ownsClient?: boolean } = {},
  ) {
    this.ownsClient = opts.ownsClient ?? false;
  }

  async ensureTable(ref: string, spec: WarehouseSpec): Promise<void> {
    assertSpec(spec);
    await this.withFamily(ref, "exclusive", async (family) => {
      if (family.live) {
        if (sameSpec(family.live.spec, spec)) return;
        throw new VectorStoreError("collection_exists", `platform table ${ref} exists with another shape`);
      }
      await this.run(`CREATE SCHEMA IF NOT EXISTS ${schemaSql(family.ref)}`, [], "create schema");
      await this.run(createTableSql(tableSql(family.ref, family.ref.base), { ref, generation: 1, spec }), [], `create ${ref}`);
    });
  }

  async dropTable(ref: string): Promise<void> {
    await this.withFamily(ref, "exclusive", async (family) => {
      const tables = [...[...family.building.keys()].map((g) => buildingTable(family.ref.base, g)), ...family.stale];
      for (const table of [...tables, family.ref.base]) await this.run(`DROP TABLE IF EXISTS ${tableSql(family.ref, table)}`, [], `drop ${ref}`);
    });
  }

  async hasTable(ref: string): Promise<boolean> {
    return this.withFamily(ref, "shared", async (family) => family.live !== null);
  }

  async upsert(ref: string, rows: UpsertRow[], target?: PlatformTarget): Promise<void> {
    if (rows.length === 0) return;
    await this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      const layout = layoutOf(spec);
      const unique = lastPerKey(rows);
      const chunks = chunked(unique).map((chunk) => upsertValues(spec, chunk)); // every row checked before any is written
      const sources = ['s."TX"', 's."TH"', 's."MH"', ...spec.metadata.map((_, i) => `s."M${i}"`), 's."V"'];
      const targets = [TEXT_COLUMN, TEXT_HASH_COLUMN, META_HASH_COLUMN, ...layout.meta, VECTOR_COLUMN].map(quoteIdent);
      const sets = targets.map((t, i) => `${t} = ${sources[i]}`).join(", ");
      for (const values of chunks) {
        await this.run(
          `MERGE INTO ${table} t USING (${values.sql}) s ON t.${quoteIdent(layout.pk)} = s."K" WHEN MATCHED THEN UPDATE SET ${sets} ` +
            `WHEN NOT MATCHED THEN INSERT (${[quoteIdent(layout.pk), ...targets].join(", ")}) VALUES (${['s."K"', ...sources].join(", ")})`,
          values.binds,
          `upsert ${ref}`,
        );
      }
    });
  }

  async delete(ref: string, pks: string[], target?: PlatformTarget): Promise<number> {
    if (pks.length === 0) return 0;
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      let deleted = 0;
      for (const chunk of chunked([...new Set(pks)], 1000)) {
        const result = await this.run(`DELETE FROM ${table} WHERE ${quoteIdent(layoutOf(spec).pk)} IN (${chunk.map(() => "?").join(", ")})`, chunk, `delete ${ref}`);
        deleted += dmlCount(result, "deleted");
      }
      return deleted;
    });
  }

  async updateMetadata(ref: string, updates: MetadataUpdate[], target?: PlatformTarget): Promise<number> {
    if (updates.length === 0) return 0;
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      const layout = layoutOf(spec);
      const chunks = chunked(lastPerKey(updates)).map((chunk) => metadataValues(spec, chunk));
      const sets = [`${quoteIdent(META_HASH_COLUMN)} = s."MH"`, ...layout.meta.map((m, i) => `${quoteIdent(m)} = s."M${i}"`)].join(", ");
      let updated = 0;
      for (const values of chunks) {
        const sql = `MERGE INTO ${table} t USING (${values.sql}) s ON t.${quoteIdent(layout.pk)} = s."K" WHEN MATCHED THEN UPDATE SET ${sets}`;
        updated += dmlCount(await this.run(sql, values.binds, `update metadata ${ref}`), "updated");
      }
      return updated;
    });
  }

  /** Pages go in the key column's own order: code points for the default VARCHAR key, numeric for a NUMBER key. */
  async hashes(ref: string, req: HashesRequest = {}): Promise<RowHashes[]> {
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, req);
      const pk = quoteIdent(layoutOf(spec).pk);
      const from = `SELECT ${pk}, ${quoteIdent(TEXT_HASH_COLUMN)}, ${quoteIdent(META_HASH_COLUMN)} FROM ${table}`;
      const limit = Math.max(1, Math.floor(req.limit ?? 1000));
      const rows: RowHashes[] = [];
      const read = (result: QueryResult) => result.rows.forEach((r) => rows.push({ pk: readKey(result, r), textHash: String(r[1]), metaHash: String(r[2]) }));
      if (req.pks) {
        for (const chunk of chunked([...new Set(req.pks)], 1000)) read(await this.run(`${from} WHERE ${pk} IN (${chunk.map(() => "?").join(", ")}) ORDER BY ${pk}`, chunk, `hashes ${ref}`));
      } else if (req.afterPk === undefined) {
        read(await this.run(`${from} ORDER BY ${pk} LIMIT ${limit}`, [], `hashes ${ref}`));
      } else {
        read(await this.run(`${from} WHERE ${pk} > ? ORDER BY ${pk} LIMIT ${limit}`, [req.afterPk], `hashes ${ref}`));
      }
      return rows;
    });
  }

  async docs(ref: string, pks: string[], target?: PlatformTarget): Promise<Map<string, StoredDoc>> {
    const out = new Map<string, StoredDoc>();
    if (pks.length === 0) return out;
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      const pk = quoteIdent(layoutOf(spec).pk);
      for (const chunk of chunked([...new Set(pks)], 1000)) {
        const result = await this.run(`SELECT ${pk}, ${quoteIdent(TEXT_COLUMN)}, ${quoteIdent(VECTOR_COLUMN)} FROM ${table} WHERE ${pk} IN (${chunk.map(() => "?").join(", ")})`, chunk, `docs ${ref}`);
        for (const r of result.rows) out.set(readKey(result, r), { text: String(r[1]), vector: readVector(r[2]) });
      }
      return out;
    });
  }

  async count(ref: string, filter?: unknown, target?: PlatformTarget): Promise<number> {
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      const binds: Bind[] = [];
      const where = compileWarehouse(parseFilter(filter, spec.metadata), spec.metadata, layoutOf(spec).meta, binds);
      const result = await this.run(`SELECT COUNT(*) FROM ${table} t WHERE ${where}`, binds, `count ${ref}`);
      return Number(result.rows[0]?.[0] ?? 0);
    });
  }

  /** Every filtered row is scored in the warehouse (it has no vector index): the path is always `exact`. */
  async search(ref: string, req: WarehouseSearchRequest): Promise<PlatformSearchResult> {
    return this.searchWith(ref, req, { vector: req.vector });
  }

  /**
   * Built-in models: the warehouse embeds `text` with the live generation's model in the same
   * statement that searches that generation, so the query and the rows always share a model.
   */
  async searchText(ref: string, req: TextSearchRequest): Promise<PlatformSearchResult> {
    return this.searchWith(ref, req, { text: req.text });
  }

  /**
   * Built-in models: writes the given rows of `ref` from their source rows, the text rendered and
   * embedded by the warehouse (warehouse-embed.ts), the metadata as given. Rows whose text is
   * blank, or that the source no longer has, are deleted. `empty` is read just before the write.
   */
  async embedFromSource(ref: string, source: SourceText, rows: EmbedRow[], target?: PlatformTarget): Promise<EmbedResult> {
    const out: EmbedResult = { embedded: [], empty: [], missing: [] };
    if (rows.length === 0) return out;
    return this.withFamily(ref, "shared", async (family) => {
      const { table, spec } = resolve(family, ref, target);
      const { pkType } = layoutOf(spec);
      for (const chunk of chunked(lastPerKey(rows))) {
        const merge = embedMergeSql(table, spec, source, chunk); // checks the rows and the model first
        const binds: Bind[] = [];
        const report = await this.run(`${sourceTextSelect(source, pkType, chunk.map((r) => r.pk), binds)}`, binds, `read source text for ${ref}`);
        const found = new Map(report.rows.map((r) => [readKey(report, r), { textHash: String(r[1]), blank: r[2] === null }]));
        for (const { pk } of chunk) {
          const f = found.get(pk);
          if (!f) out.missing.push(pk);
          else if (f.blank) out.empty.push({ pk, textHash: f.textHash });
          else out.embedded.push(pk);
        }
        await this.run(merge.sql, merge.binds, `embed ${ref}`);
      }
      return out;
    });
  }

  /** The key column of a source table, typed as the catalog has it (`NUMBER(10,2)`), for WarehouseSpec.pk. */
  async keyColumn(table: { schema: string; name: string }, column: string): Promise<WarehouseKeyColumn> {
    const result = await this.run(
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

  /** The session's database, for `warehouseVectorRef` when the connection names none. */
  async currentDatabase(): Promise<string> {
    const result = await this.run("SELECT CURRENT_DATABASE()", [], "current database");
    const name = result.rows[0]?.[0];
    if (typeof name !== "string" || name === "") throw new DriverError("the warehouse session has no current database: set `database` on the connection", { retryable: false });
    return name;
  }

  async generations(ref: string): Promise<PlatformGenerations> {
    return this.withFamily(ref, "shared", async (family) => {
      const live = resolveLive(family, ref);
      return { live: live.generation, building: [...family.building.keys()].sort((a, b) => a - b) };
    });
  }

  async createGeneration(ref: string, spec: WarehouseSpec): Promise<number> {
    assertSpec(spec);
    return this.withFamily(ref, "exclusive", async (family) => {
      resolveLive(family, ref);
      await this.dropStale(family);
      const generation = family.highest + 1;
      await this.run(createTableSql(tableSql(family.ref, buildingTable(family.ref.base, generation)), { ref, generation, spec }), [], `create generation ${generation} of ${ref}`);
      return generation;
    });
  }

  /** SWAP WITH exchanges the two names atomically; the old generation, now under the building name, is dropped. */
  async swapGeneration(ref: string, generation: number): Promise<void> {
    await this.withFamily(ref, "exclusive", async (family) => {
      resolveLive(family, ref);
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      const building = tableSql(family.ref, buildingTable(family.ref.base, generation));
      await this.run(`ALTER TABLE ${tableSql(family.ref, family.ref.base)} SWAP WITH ${building}`, [], `swap ${ref}`);
      await this.run(`DROP TABLE ${building}`, [], `drop old generation of ${ref}`);
      await this.dropStale(family);
    });
  }

  async dropGeneration(ref: string, generation: number): Promise<void> {
    await this.withFamily(ref, "exclusive", async (family) => {
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      await this.run(`DROP TABLE ${tableSql(family.ref, buildingTable(family.ref.base, generation))}`, [], `drop generation ${generation} of ${ref}`);
    });
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }

  private async searchWith(ref: string, req: Omit<WarehouseSearchRequest, "vector">, query: SearchQuery): Promise<PlatformSearchResult> {
    return this.withFamily(ref, "shared", async (family) => {
      const live = resolveLive(family, ref);
      if (req.generation !== undefined && req.generation !== live.generation) throw noGeneration(ref, req.generation);
      const node = parseFilter(req.filter, live.spec.metadata);
      const run = (sql: string, binds: Bind[], operation: string) => this.run(sql, binds, `${operation} ${ref}`);
      const hits = await searchTable(run, tableSql(family.ref, family.ref.base), live.spec, { k: req.k, minScore: req.minScore, node, query });
      return { hits, path: Math.floor(req.k) > 0 ? "exact" : "empty" };
    });
  }

  private async dropStale(family: Family): Promise<void> {
    for (const table of family.stale) await this.run(`DROP TABLE IF EXISTS ${tableSql(family.ref, table)}`, [], "drop leftover generation");
    family.stale = [];
  }

  /** The ref's tables, read under the ref's lock (a table's comment says which generation it is). */
  private async withFamily<T>(ref: string, mode: "shared" | "exclusive", fn: (family: Family) => Promise<T>): Promise<T> {
    const parsed = parseRef(ref);
    return this.locks.with(ref, mode, async () => fn(await this.readFamily(ref, parsed)));
  }

  private async readFamily(ref: string, parsed: ParsedRef): Promise<Family> {
    const prefix = `${parsed.base}__G`;
    const result = await this.run(
      `SELECT TABLE_NAME, COMMENT FROM ${quoteIdent(parsed.database)}.INFORMATION_SCHEMA.TABLES
       WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND (TABLE_NAME = ? OR LEFT(TABLE_NAME, ?) = ?)`,
      [PLATFORM_SCHEMA, parsed.base, prefix.length, prefix],
      `read ${ref}`,
    );
    const family: Family = { ref: parsed, live: null, building: new Map(), stale: [], highest: 0 };
    for (const [name, text] of result.rows.map((r) => [String(r[0]), r[1]] as const)) {
      const comment = parseComment(text);
      const numbered = /__G(\d+)$/.exec(name);
      family.highest = Math.max(family.highest, comment?.generation ?? 0, Number(numbered?.[1] ?? 0));
      if (!comment || comment.ref !== ref) continue; // not ours: never touched
      if (name === parsed.base) family.live = comment;
      else if (name === buildingTable(parsed.base, comment.generation)) family.building.set(comment.generation, comment);
      else family.stale.push(name);
    }
    return family;
  }

  private run(sql: string, binds: Bind[], operation: string): Promise<QueryResult> {
    return this.client.execute(sql, binds, `platform store: ${operation}`);
  }
}

function resolveLive(family: Family, ref: string): TableComment {
  if (!family.live) throw new VectorStoreError("collection_not_found", `no platform table ${ref}`);
  return family.live;
}

function resolve(family: Family, ref: string, target: PlatformTarget = {}): Resolved {
  const live = resolveLive(family, ref);
  const g = target.generation;
  if (g === undefined || g === live.generation) return { table: tableSql(family.ref, family.ref.base), spec: live.spec };
  const building = family.building.get(g);
  if (!building) throw noGeneration(ref, g);
  return { table: tableSql(family.ref, buildingTable(family.ref.base, g)), spec: building.spec };
}

function noGeneration(ref: string, generation: number): VectorStoreError {
  return new VectorStoreError("generation_not_found", `platform table ${ref} has no building generation ${generation}`);
}

function chunked<T>(items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
