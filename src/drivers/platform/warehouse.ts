// The platform-mode store on the warehouse: vectors in the customer's warehouse, in a table with
// a VECTOR(FLOAT, d) column in the schema VECSYNC of the connection's database (names and DDL:
// warehouse-schema.ts; search: warehouse-search.ts; built-in models: warehouse-embed.ts).
// Every write is one statement (MERGE or DELETE), atomic in the warehouse; DDL commits by itself
// there, so a re-backfill's swap is the warehouse's atomic `ALTER TABLE … SWAP WITH`. Calls on a
// ref are ordered in process by warehouse-lock.ts. See docs/platform-warehouse.md.
import { DriverError } from "../../shared/errors.ts";
import { WarehouseClient, type QueryResult, type WarehouseCredentials } from "../sources/warehouse-connect.ts";
import { parseFilter, VectorStoreError, type MetadataUpdate, type RowHashes, type SearchRequest, type UpsertRow } from "../store-api/index.ts";
import { lastPerKey } from "./pgvector-rows.ts";
import { UnsupportedModeError, type HashesRequest, type PlatformSearchResult, type PlatformTarget, type PlatformVectorStore, type StoredDoc } from "./types.ts";
import { embedChunk, type EmbedResult, type EmbedRow, type SourceText } from "./warehouse-embed.ts";
import { noGeneration, readFamily, resolve, resolveLive, type Family } from "./warehouse-family.ts";
import { compileWarehouse, type Bind } from "./warehouse-filters.ts";
import { RefLocks } from "./warehouse-lock.ts";
import { dmlCount, metadataMergeSql, metadataValues, readKey, readVector, ROWS_PER_STATEMENT, upsertMergeSql, upsertValues } from "./warehouse-rows.ts";
import {
  assertSpec,
  buildingTable,
  createTableSql,
  layoutOf,
  META_HASH_COLUMN,
  parseRef,
  quoteIdent,
  sameSpec,
  specProblems,
  tableSql,
  TEXT_COLUMN,
  TEXT_HASH_COLUMN,
  VECTOR_COLUMN,
  warehouseVectorRef,
  type WarehouseKeyColumn,
  type WarehouseSpec,
} from "./warehouse-schema.ts";
import { searchTable, type SearchQuery } from "./warehouse-search.ts";
import { ensureSchema, keyColumn, privilegeError } from "./warehouse-setup.ts";

export type { EmbedResult, EmbedRow, SourceText } from "./warehouse-embed.ts";
export type { WarehouseKeyColumn, WarehouseSpec } from "./warehouse-schema.ts";
export { warehouseVectorRef } from "./warehouse-schema.ts";
export { isPrivilegeError } from "./warehouse-setup.ts";

/** A built-in model's query: the text, embedded by the warehouse in the searching statement. */
export type TextSearchRequest = Omit<SearchRequest, "vector"> & { text: string };

/** The live generation and its shape (PlatformGenerations of the per-table seam). */
export interface WarehouseGenerations {
  live: number;
  building: number[];
  spec: WarehouseSpec;
}

/** Opens the store with the connection's vetted credentials (host checks done by the caller). */
export function connectWarehouseStore(credentials: WarehouseCredentials, options: { url?: string | null } = {}): WarehouseVectorStore {
  const client = new WarehouseClient(credentials, options.url ? new URL(options.url) : null);
  return new WarehouseVectorStore(client, { ownsClient: true, database: credentials.database ?? null });
}

export class WarehouseVectorStore implements PlatformVectorStore {
  private readonly locks = new RefLocks();
  private readonly ownsClient: boolean;
  private readonly database: string | null;

  /** One store per connection and process: the ref locks live in the instance. `database`: the connection's. */
  constructor(
    private readonly client: WarehouseClient,
    opts: { ownsClient?: boolean; database?: string | null } = {},
  ) {
    this.ownsClient = opts.ownsClient ?? false;
    this.database = opts.database ?? null;
  }

  /** `<DB>.VECSYNC.VT_<ID8>_<NAME>` in the connection's database (platform mode needs one named). */
  refFor(id: string, name: string): string {
    if (!this.database) throw new DriverError("platform mode on the warehouse needs the connection's `database`: the vector table lives in <database>.VECSYNC", { retryable: false });
    return warehouseVectorRef(this.database, id, name);
  }

  specProblems(spec: WarehouseSpec): string[] {
    return specProblems(spec);
  }

  async ensureTable(ref: string, spec: WarehouseSpec): Promise<void> {
    assertSpec(spec);
    await this.withFamily(ref, "exclusive", async (family) => {
      if (family.live) {
        if (sameSpec(family.live.spec, spec)) return;
        throw new VectorStoreError("collection_exists", `platform table ${ref} exists with another shape`);
      }
      await this.ddl(family, async () => {
        await ensureSchema((sql, binds, operation) => this.run(sql, binds, operation), family.ref);
        await this.run(createTableSql(tableSql(family.ref, family.ref.base), { ref, generation: 1, spec }), [], `create ${ref}`);
      });
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
      const chunks = chunked(lastPerKey(rows)).map((chunk) => upsertValues(spec, chunk)); // every row checked before any is written
      for (const values of chunks) await this.run(upsertMergeSql(table, spec, values), values.binds, `upsert ${ref}`);
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
      let updated = 0;
      for (const values of chunked(lastPerKey(updates)).map((chunk) => metadataValues(spec, chunk))) {
        updated += dmlCount(await this.run(metadataMergeSql(table, spec, values), values.binds, `update metadata ${ref}`), "updated");
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

  /**
   * Every filtered row is scored in the warehouse (it has no vector index): the path is `exact`.
   * With `target.generation`, a live generation other than that one → generation_not_found (the
   * caller embedded the query for the one it named: it reads `generations` and embeds again).
   */
  async search(ref: string, req: SearchRequest, target?: PlatformTarget): Promise<PlatformSearchResult> {
    // No BM25 here (docs/vector-tables.md#query-modes); the query service refuses these modes first.
    if (req.mode === "keyword" || req.mode === "hybrid") throw new UnsupportedModeError(req.mode, "the warehouse's platform tables have no BM25 search");
    return this.searchWith(ref, req, { vector: req.vector }, target);
  }

  /**
   * Built-in models: the warehouse embeds `text` with the live generation's model in the same
   * statement that searches that generation, so the query and the rows always share a model.
   */
  async searchText(ref: string, req: TextSearchRequest, target?: PlatformTarget): Promise<PlatformSearchResult> {
    return this.searchWith(ref, req, { text: req.text }, target);
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
      const run = (sql: string, binds: Bind[], operation: string) => this.run(sql, binds, `${operation} ${ref}`);
      for (const chunk of chunked(lastPerKey(rows))) await embedChunk(run, table, spec, source, chunk, out);
      return out;
    });
  }

  /** The key column of a source table (as WarehouseSource.resolveTable names it) typed exactly, for `primaryKey`. */
  async keyColumn(table: { schema: string; name: string }, column: string): Promise<WarehouseKeyColumn> {
    return keyColumn((sql, binds, operation) => this.run(sql, binds, operation), table, column);
  }

  async generations(ref: string): Promise<WarehouseGenerations> {
    return this.withFamily(ref, "shared", async (family) => {
      const live = resolveLive(family, ref);
      return { live: live.generation, building: [...family.building.keys()].sort((a, b) => a - b), spec: live.spec };
    });
  }

  /** The live generation, read from the warehouse each time (no ANN index to keep, no cache to trust). */
  async live(ref: string): Promise<{ generation: number; spec: WarehouseSpec }> {
    const { live, spec } = await this.generations(ref);
    return { generation: live, spec };
  }

  /** Searches are exact scans with VECTOR_COSINE_SIMILARITY: there is no ANN index to build. */
  async buildIndex(): Promise<void> {}

  /** The key column defaults to the live generation's. */
  async createGeneration(ref: string, spec: WarehouseSpec): Promise<number> {
    return this.withFamily(ref, "exclusive", async (family) => {
      const full: WarehouseSpec = { ...spec, primaryKey: spec.primaryKey ?? resolveLive(family, ref).spec.primaryKey };
      assertSpec(full);
      await this.dropStale(family);
      const generation = family.highest + 1;
      const table = tableSql(family.ref, buildingTable(family.ref.base, generation));
      await this.ddl(family, () => this.run(createTableSql(table, { ref, generation, spec: full }), [], `create generation ${generation} of ${ref}`));
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

  private async searchWith(ref: string, req: Omit<SearchRequest, "vector">, query: SearchQuery, target: PlatformTarget = {}): Promise<PlatformSearchResult> {
    return this.withFamily(ref, "shared", async (family) => {
      const live = resolveLive(family, ref);
      if (target.generation !== undefined && target.generation !== live.generation) throw noGeneration(ref, target.generation);
      const node = parseFilter(req.filter, live.spec.metadata);
      const run = (sql: string, binds: Bind[], operation: string) => this.run(sql, binds, `${operation} ${ref}`);
      const hits = await searchTable(run, tableSql(family.ref, family.ref.base), live.spec, { k: req.k, minScore: req.minScore, node, query });
      return { hits, path: Math.floor(req.k) > 0 ? "exact" : "empty" };
    });
  }

  /** DDL whose refusal for want of a grant says what to grant. */
  private async ddl<T>(family: Family, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw privilegeError(err, family.ref.database) ?? err;
    }
  }

  private async dropStale(family: Family): Promise<void> {
    for (const table of family.stale) await this.run(`DROP TABLE IF EXISTS ${tableSql(family.ref, table)}`, [], "drop leftover generation");
    family.stale = [];
  }

  /** The ref's tables, read under the ref's lock (a table's comment says which generation it is). */
  private async withFamily<T>(ref: string, mode: "shared" | "exclusive", fn: (family: Family) => Promise<T>): Promise<T> {
    const parsed = parseRef(ref);
    return this.locks.with(ref, mode, async () => fn(await readFamily((sql, binds) => this.run(sql, binds, `read ${ref}`), ref, parsed)));
  }

  private run(sql: string, binds: Bind[], operation: string): Promise<QueryResult> {
    return this.client.execute(sql, binds, `platform store: ${operation}`);
  }
}

function chunked<T>(items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
