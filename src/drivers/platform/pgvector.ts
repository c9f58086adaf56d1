// The platform-mode store on the relational source: vectors in the source Postgres itself, with
// pgvector, in the schema `vecsync` (names and DDL: pgvector-schema.ts; the tables of a ref:
// pgvector-family.ts; row writes: pgvector-writes.ts; searches: pgvector-query.ts and
// pgvector-search.ts; query modes and BM25: pgvector-modes.ts, pgvector-keyword*.ts; what the
// database must offer: pgvector-setup.ts).
// Every call but a search is one transaction that first takes an advisory lock on the ref:
// shared for row work, exclusive for DDL (create, swap, drop), so DDL never meets a write in
// flight. A cosine search takes no lock: it runs on whichever table is live, which Postgres's own
// table lock keeps from being dropped under it, and then checks that table's OID is the one it
// planned for (pgvector-query.ts): it sees the old generation or the new one, never a mix. The BM25
// side of a query mode takes the shared lock and checks the generation it was pinned to.
import postgres from "postgres";
import { DriverError } from "../../shared/errors.ts";
import { connectionOptions, type PostgresCredentials, type PostgresSourceOptions } from "../sources/postgres-connect.ts";
import { FilterError, parseFilter, VectorStoreError, type MetadataUpdate, type RowHashes, type SearchRequest, type UpsertRow } from "../store-api/index.ts";
import { compilePg } from "./filters-pg.ts";
import { familyOf, noGeneration, readFamily, resolve, type Family, type LockMode } from "./pgvector-family.ts";
import { parseVectorText, type Param } from "./pgvector-rows.ts";
import { dropStatsStatements, keywordTableStatements } from "./pgvector-keyword.ts";
import { onLiveTable, searchWithMode } from "./pgvector-modes.ts";
import { upgradeIfOld } from "./pgvector-upgrade.ts";
import { deleteRows, updateMetadataStatements, writeRows } from "./pgvector-writes.ts";
import {
  assertSpec,
  baseOf,
  buildingTable,
  createTableStatements,
  createVectorIndex,
  layoutOf,
  META_HASH_COLUMN,
  platformVectorRef,
  qualified,
  quoteIdent,
  sameSpec,
  specProblems,
  TEXT_COLUMN,
  TEXT_HASH_COLUMN,
  VECTOR_COLUMN,
} from "./pgvector-schema.ts";
import { PgvectorSearcher } from "./pgvector-query.ts";
import { driverError, privilegeError, setupDatabase } from "./pgvector-setup.ts";
import { PlatformSetupError, UnsupportedModeError, type HashesRequest, type PlatformGenerations, type PlatformSearchResult, type PlatformTableSpec, type PlatformTarget, type PlatformVectorStore, type StoredDoc } from "./types.ts";

type Sql = postgres.Sql;
type Tx = postgres.TransactionSql;

/** Search tuning; tests lower `exactMaxRows` (pgvector-search.ts EXACT_MAX_ROWS) to reach the HNSW path on small tables. */
export type PgvectorTuning = { exactMaxRows?: number };

/**
 * Opens the store with the source connection's vetted credentials (docs/api.md#host-guard host checks
 * done by the caller). Its sessions pin `search_path` to `pg_catalog` and the schema pgvector lives
 * in (docs/security.md#outbound-calls): the default, `"$user", public`, would let a schema named
 * like our user, which another database user may own, put its own `vector` type or `<=>` operator
 * before pgvector's, and see or bend every query vector. Read once, over one short connection.
 */
export async function openPgvectorStore(credentials: PostgresCredentials, options: PostgresSourceOptions & PgvectorTuning = {}): Promise<PgvectorStore> {
  const probe = postgres({ ...connectionOptions(credentials, { ...options, maxConnections: 1 }) });
  let schema: string;
  try {
    schema = await vectorSchema(probe);
  } catch (err) {
    throw driverError(err);
  } finally {
    await probe.end({ timeout: 5 }).catch(() => undefined);
  }
  return connectPgvectorStore(credentials, { ...options, searchPath: `pg_catalog, ${quoteIdent(schema)}` });
}

/** Where `CREATE EXTENSION vector` put pgvector; `public`, where it would put it, before that. */
async function vectorSchema(sql: Sql): Promise<string> {
  const [row] = await sql.unsafe("SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'");
  return (row?.schema as string | undefined) ?? "public";
}

/** The store on a pool of its own; `searchPath` pins the sessions' search_path (openPgvectorStore). */
export function connectPgvectorStore(credentials: PostgresCredentials, options: PostgresSourceOptions & PgvectorTuning & { searchPath?: string } = {}): PgvectorStore {
  const base = connectionOptions(credentials, options);
  // Unnamed statements: a generation swap may change a column's type under the same SQL text,
  // which a cached prepared statement would refuse ("cached plan must not change result type").
  // Searches inline their values as quoted literals (pgvector-search.ts inline), exact only with
  // standard_conforming_strings, pinned here whatever the server's default.
  const connection = { ...base.connection, standard_conforming_strings: "on", ...(options.searchPath ? { search_path: options.searchPath } : {}) };
  const sql = postgres({ ...base, prepare: false, connection }) as unknown as Sql;
  return new PgvectorStore(sql, { ownsConnection: true, database: credentials.database, exactMaxRows: options.exactMaxRows });
}

export class PgvectorStore implements PlatformVectorStore {
  private readonly ownsConnection: boolean;
  private readonly database: string;
  /** The database checked (extension, schema) once per store; a failed check is tried again next time. */
  private ready: Promise<void> | null = null;
  private readonly searcher: PgvectorSearcher;

  /** `sql` may be shared; it is ended by `close()` only when the store opened it. */
  constructor(
    private readonly sql: Sql,
    opts: { ownsConnection?: boolean; database?: string } & PgvectorTuning = {},
  ) {
    this.ownsConnection = opts.ownsConnection ?? false;
    this.database = opts.database ?? "(this database)";
    const readLive = (ref: string) => this.withFamily(ref, "shared", async (_tx, family) => ({ ...resolve(family, ref, {}).comment, oid: family.liveOid! }));
    this.searcher = new PgvectorSearcher(sql, readLive, opts.exactMaxRows);
  }

  refFor(id: string, name: string): string {
    return platformVectorRef(id, name);
  }

  specProblems(spec: PlatformTableSpec): string[] {
    return specProblems(spec);
  }

  async ensureTable(ref: string, spec: PlatformTableSpec): Promise<void> {
    try {
      assertSpec(spec);
    } catch (err) {
      throw new PlatformSetupError("names", (err as Error).message);
    }
    await this.setup();
    try {
      await this.withFamily(ref, "exclusive", async (tx, family) => {
        if (family.live) {
          if (sameSpec(family.live.spec, spec)) return;
          throw new VectorStoreError("collection_exists", `platform table ${ref} exists with another shape`);
        }
        // No HNSW index while the first backfill fills it (searches are exact scans meanwhile): buildIndex makes it in one go.
        const statements = [...createTableStatements(family.base, { ref, generation: 1, spec, keyword: true }, { vectorIndex: false }), ...keywordTableStatements(family.base, 1)];
        for (const statement of statements) await tx.unsafe(statement);
      });
      this.searcher.forget(ref);
    } catch (err) {
      if (err instanceof PlatformSetupError) throw err;
      throw privilegeError(err instanceof DriverError ? err.cause : err, this.database) ?? err;
    }
  }

  async buildIndex(ref: string): Promise<void> {
    if (await upgradeIfOld(ref, this.withFamily.bind(this))) this.searcher.forget(ref);
    await this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, {});
      const index = createVectorIndex(table, comment.generation, comment.spec.dimensions);
      // Looked up first: CREATE INDEX IF NOT EXISTS would still wait for the table's writers.
      const [has] = await tx.unsafe(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = $1::text::regclass AND am.amname = 'hnsw'`,
        [qualified(table)],
      );
      if (index && !has) await tx.unsafe(index);
    });
  }

  async dropTable(ref: string): Promise<void> {
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      for (const g of family.building.keys()) {
        await tx.unsafe(`DROP TABLE IF EXISTS ${qualified(buildingTable(family.base, g))}`);
        for (const statement of dropStatsStatements(family.base, g)) await tx.unsafe(statement);
      }
      await tx.unsafe(`DROP TABLE IF EXISTS ${qualified(family.base)}`);
      if (family.live) for (const statement of dropStatsStatements(family.base, family.live.generation)) await tx.unsafe(statement);
    });
    this.searcher.forget(ref);
  }

  async hasTable(ref: string): Promise<boolean> {
    return this.withFamily(ref, "shared", async (_tx, family) => family.live !== null);
  }

  async upsert(ref: string, rows: UpsertRow[], target?: PlatformTarget): Promise<void> {
    if (rows.length === 0) return;
    await this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      await writeRows(tx, table, comment, rows);
    });
  }

  async delete(ref: string, pks: string[], target?: PlatformTarget): Promise<number> {
    if (pks.length === 0) return 0;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      return deleteRows(tx, table, comment, pks);
    });
  }

  async updateMetadata(ref: string, updates: MetadataUpdate[], target?: PlatformTarget): Promise<number> {
    if (updates.length === 0) return 0;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      let updated = 0;
      for (const statement of updateMetadataStatements(table, comment.spec, updates)) updated += (await tx.unsafe(statement.sql, statement.params)).length;
      return updated;
    });
  }

  async hashes(ref: string, req: HashesRequest = {}): Promise<RowHashes[]> {
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, req);
      const { pk, pkList, pkParam } = layoutOf(comment.spec);
      const from = `SELECT ${pk} AS key, ${TEXT_HASH_COLUMN} AS text_hash, ${META_HASH_COLUMN} AS meta_hash FROM ${qualified(table)}`;
      const limit = String(req.limit ?? 1000);
      const rows = req.pks
        ? await tx.unsafe(`${from} WHERE ${pk} IN (${pkList(1)}) ORDER BY ${pk}`, [JSON.stringify(req.pks)])
        : req.afterPk === undefined
          ? await tx.unsafe(`${from} ORDER BY ${pk} LIMIT $1::text::bigint`, [limit])
          : await tx.unsafe(`${from} WHERE ${pk} > ${pkParam(1)} ORDER BY ${pk} LIMIT $2::text::bigint`, [req.afterPk, limit]);
      return rows.map((r) => ({ pk: String(r.key), textHash: String(r.text_hash), metaHash: String(r.meta_hash) }));
    });
  }

  async docs(ref: string, pks: string[], target?: PlatformTarget): Promise<Map<string, StoredDoc>> {
    const out = new Map<string, StoredDoc>();
    if (pks.length === 0) return out;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      const { pk, pkList } = layoutOf(comment.spec);
      const rows = await tx.unsafe(`SELECT ${pk} AS key, ${TEXT_COLUMN} AS text, ${VECTOR_COLUMN}::text AS vec FROM ${qualified(table)} WHERE ${pk} IN (${pkList(1)})`, [JSON.stringify(pks)]);
      for (const r of rows) out.set(String(r.key), { text: String(r.text), vector: parseVectorText(String(r.vec)) });
      return out;
    });
  }

  async count(ref: string, filter?: unknown, target?: PlatformTarget): Promise<number> {
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      const params: Param[] = [];
      const where = compilePg(parseFilter(filter, comment.spec.metadata), comment.spec.metadata, params, layoutOf(comment.spec).meta);
      const rows = await tx.unsafe(`SELECT count(*)::text AS n FROM ${qualified(table)} WHERE ${where}`, params);
      return Number(rows[0]?.n ?? 0);
    });
  }

  async search(ref: string, req: SearchRequest, target: PlatformTarget = {}): Promise<PlatformSearchResult> {
    const vector = (r: SearchRequest) => this.run(() => this.searcher.search(ref, { ...r, mode: undefined }, target));
    if (req.mode === undefined) return vector(req);
    return searchWithMode({ vector, onLive: onLiveTable(ref, target, this.withFamily.bind(this)) }, req);
  }

  async live(ref: string): Promise<{ generation: number; spec: PlatformTableSpec }> {
    const { generation, spec } = await this.run(() => this.searcher.live(ref));
    return { generation, spec };
  }

  async generations(ref: string): Promise<PlatformGenerations> {
    return this.withFamily(ref, "shared", async (_tx, family) => {
      const { comment } = resolve(family, ref, {});
      return { live: comment.generation, building: [...family.building.keys()].sort((a, b) => a - b), spec: comment.spec };
    });
  }

  async createGeneration(ref: string, spec: PlatformTableSpec): Promise<number> {
    return this.withFamily(ref, "exclusive", async (tx, family) => {
      const { comment } = resolve(family, ref, {});
      const full: PlatformTableSpec = { ...spec, primaryKey: spec.primaryKey ?? comment.spec.primaryKey };
      assertSpec(full);
      const generation = Math.max(comment.generation, ...family.building.keys()) + 1;
      // No vector index while it fills: built once, before the swap (a bulk build beats row-by-row inserts into the graph).
      const table = buildingTable(family.base, generation);
      for (const statement of [...createTableStatements(table, { ref, generation, spec: full, keyword: true }, { vectorIndex: false }), ...keywordTableStatements(table, generation)]) await tx.unsafe(statement);
      return generation;
    });
  }

  async swapGeneration(ref: string, generation: number): Promise<void> {
    // The index is built first, under the building table's own lock only: searches of the live
    // table go on meanwhile, and the exclusive part below is two catalog changes.
    await this.withFamily(ref, "shared", async (tx, family) => {
      const building = family.building.get(generation);
      if (!building) throw noGeneration(ref, generation);
      const index = createVectorIndex(buildingTable(family.base, generation), generation, building.spec.dimensions);
      if (index) await tx.unsafe(index);
    });
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      resolve(family, ref, {});
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      await tx.unsafe(`DROP TABLE ${qualified(family.base)}`);
      for (const statement of dropStatsStatements(family.base, family.live!.generation)) await tx.unsafe(statement);
      await tx.unsafe(`ALTER TABLE ${qualified(buildingTable(family.base, generation))} RENAME TO ${quoteIdent(family.base)}`);
    });
    this.searcher.forget(ref);
  }

  async dropGeneration(ref: string, generation: number): Promise<void> {
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      await tx.unsafe(`DROP TABLE ${qualified(buildingTable(family.base, generation))}`);
      for (const statement of dropStatsStatements(family.base, generation)) await tx.unsafe(statement);
    });
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.sql.end({ timeout: 5 });
  }

  private async setup(): Promise<void> {
    this.ready ??= this.run(() => setupDatabase(this.sql, this.database));
    try {
      await this.ready;
    } catch (err) {
      this.ready = null;
      throw err;
    }
  }

  /**
   * One transaction holding the ref's advisory lock, with the ref's tables read after taking it.
   * The two statements are pipelined: the read starts (and takes its snapshot) only once the
   * lock is held, so it sees every swap that committed before.
   */
  private async withFamily<T>(ref: string, mode: LockMode, fn: (tx: Tx, family: Family) => Promise<T>): Promise<T> {
    const base = baseOf(ref);
    return this.run(() =>
      this.sql.begin(async (tx) => {
        const lock = mode === "shared" ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock";
        const [, rows] = await Promise.all([tx.unsafe(`SELECT ${lock}(hashtextextended($1::text, 0))`, [`vecsync:${ref}`]), readFamily(tx, base)]);
        return fn(tx, familyOf(rows, ref, base));
      }) as Promise<T>,
    );
  }

  /** Our own errors pass through; Postgres and network failures become DriverErrors. */
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof VectorStoreError || e instanceof FilterError || e instanceof DriverError || e instanceof UnsupportedModeError) throw e;
      throw driverError(e);
    }
  }
}
