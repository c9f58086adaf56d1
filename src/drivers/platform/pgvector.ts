// The platform-mode store on the relational source: vectors in the source Postgres itself, with
// pgvector, in the schema `vecsync` (names and DDL: pgvector-schema.ts; search: pgvector-search.ts).
// Every call is one transaction that first takes an advisory lock on the ref: shared for row
// work and searches, exclusive for DDL (create, swap, drop). So a generation swap waits for the
// searches in flight and the next ones wait for it: each sees the old table or the new one,
// never a mix and never a missing table.
import postgres from "postgres";
import { DriverError } from "../../shared/errors.ts";
import { connectionOptions, type PostgresCredentials, type PostgresSourceOptions } from "../sources/postgres-connect.ts";
import { FilterError, parseFilter, VectorStoreError, type GenerationSpec, type MetadataUpdate, type RowHashes, type SearchRequest, type UpsertRow } from "../vector-store/index.ts";
import { compilePg, metadataColumn, PG_CAST, placeholder } from "./filters-pg.ts";
import { assertText, lastPerKey, metadataParams, parseVectorText, rowsPerStatement, vectorText, type Param } from "./pgvector-rows.ts";
import {
  assertSpec,
  baseOf,
  buildingPattern,
  buildingTable,
  createTableStatements,
  parseComment,
  PLATFORM_SCHEMA,
  qualified,
  quoteIdent,
  sameSpec,
  type TableComment,
} from "./pgvector-schema.ts";
import { searchTable, type Runner } from "./pgvector-search.ts";
import type { HashesRequest, PlatformGenerations, PlatformSearchResult, PlatformTarget, PlatformVectorStore, StoredDoc } from "./types.ts";

type Sql = postgres.Sql;
type Tx = postgres.TransactionSql;

/** The tables of one ref: the live one (when it exists) and its building generations. */
interface Family {
  base: string;
  live: TableComment | null;
  building: Map<number, TableComment>;
}

/** A resolved target: the table to use and its generation's shape. */
interface Resolved {
  table: string;
  comment: TableComment;
}

/** Opens the store with the source connection's vetted credentials (docs/api.md#host-guard host checks done by the caller). */
export function connectPgvectorStore(credentials: PostgresCredentials, options: PostgresSourceOptions = {}): PgvectorStore {
  // Unnamed statements: a generation swap may change a column's type under the same SQL text,
  // which a cached prepared statement would refuse ("cached plan must not change result type").
  const sql = postgres({ ...connectionOptions(credentials, options), prepare: false }) as unknown as Sql;
  return new PgvectorStore(sql, { ownsConnection: true });
}

export class PgvectorStore implements PlatformVectorStore {
  private readonly ownsConnection: boolean;

  /** `sql` may be shared; it is ended by `close()` only when the store opened it. */
  constructor(
    private readonly sql: Sql,
    opts: { ownsConnection?: boolean } = {},
  ) {
    this.ownsConnection = opts.ownsConnection ?? false;
  }

  async ensureTable(ref: string, spec: GenerationSpec): Promise<void> {
    assertSpec(spec);
    await this.setup();
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      if (family.live) {
        if (sameSpec(family.live.spec, spec)) return;
        throw new VectorStoreError("collection_exists", `platform table ${ref} exists with another shape`);
      }
      for (const statement of createTableStatements(family.base, { ref, generation: 1, spec })) await tx.unsafe(statement);
    });
  }

  async dropTable(ref: string): Promise<void> {
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      for (const g of family.building.keys()) await tx.unsafe(`DROP TABLE IF EXISTS ${qualified(buildingTable(family.base, g))}`);
      await tx.unsafe(`DROP TABLE IF EXISTS ${qualified(family.base)}`);
    });
  }

  async hasTable(ref: string): Promise<boolean> {
    return this.withFamily(ref, "shared", async (_tx, family) => family.live !== null);
  }

  async upsert(ref: string, rows: UpsertRow[], target?: PlatformTarget): Promise<void> {
    if (rows.length === 0) return;
    await this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      const { spec } = comment;
      const meta = spec.metadata.map((_, i) => metadataColumn(i));
      const casts = spec.metadata.map((c) => PG_CAST[c.type]);
      const columns = ["pk", "text_hash", "meta_hash", "text", ...meta, "embedding"];
      const updates = columns.slice(1).map((c) => `${c} = excluded.${c}`).join(", ");
      const unique = lastPerKey(rows);
      // Validate every row before writing any.
      const values = unique.map((r) => [r.pk, r.textHash, r.metaHash, assertText(r.text, "text", r.pk), ...metadataParams(spec, r.metadata, r.pk), vectorText(r.vector, spec.dimensions, r.pk)]);
      const per = rowsPerStatement(columns.length);
      for (let start = 0; start < values.length; start += per) {
        const chunk = values.slice(start, start + per);
        const params: Param[] = [];
        const tuples = chunk.map((row) => {
          const cells = row.map((value, i) => {
            params.push(value);
            const cast = i < 4 ? "text" : i < 4 + casts.length ? casts[i - 4] : `vector(${spec.dimensions})`;
            return placeholder(params.length, cast!);
          });
          return `(${cells.join(", ")})`;
        });
        await tx.unsafe(`INSERT INTO ${qualified(table)} (${columns.join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT (pk) DO UPDATE SET ${updates}`, params);
      }
    });
  }

  async delete(ref: string, pks: string[], target?: PlatformTarget): Promise<number> {
    if (pks.length === 0) return 0;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table } = resolve(family, ref, target);
      const rows = await tx.unsafe(`DELETE FROM ${qualified(table)} WHERE pk IN (SELECT jsonb_array_elements_text($1::text::jsonb)) RETURNING 1`, [JSON.stringify(pks)]);
      return rows.length;
    });
  }

  async updateMetadata(ref: string, updates: MetadataUpdate[], target?: PlatformTarget): Promise<number> {
    if (updates.length === 0) return 0;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      const { spec } = comment;
      const meta = spec.metadata.map((_, i) => metadataColumn(i));
      const casts = ["text", "text", ...spec.metadata.map((c) => PG_CAST[c.type])];
      const values = lastPerKey(updates).map((u) => [u.pk, u.metaHash, ...metadataParams(spec, u.metadata, u.pk)]);
      const sets = ["meta_hash", ...meta].map((c) => `${c} = u.${c}`).join(", ");
      let updated = 0;
      const per = rowsPerStatement(casts.length);
      for (let start = 0; start < values.length; start += per) {
        const params: Param[] = [];
        const tuples = values.slice(start, start + per).map((row) => `(${row.map((v, i) => (params.push(v), placeholder(params.length, casts[i]!))).join(", ")})`);
        const rows = await tx.unsafe(
          `UPDATE ${qualified(table)} AS t SET ${sets} FROM (VALUES ${tuples.join(", ")}) AS u (pk, meta_hash${meta.map((m) => `, ${m}`).join("")}) WHERE t.pk = u.pk RETURNING 1`,
          params,
        );
        updated += rows.length;
      }
      return updated;
    });
  }

  async hashes(ref: string, req: HashesRequest = {}): Promise<RowHashes[]> {
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table } = resolve(family, ref, req);
      const from = `SELECT pk, text_hash, meta_hash FROM ${qualified(table)}`;
      const rows = req.pks
        ? await tx.unsafe(`${from} WHERE pk IN (SELECT jsonb_array_elements_text($1::text::jsonb)) ORDER BY pk`, [JSON.stringify(req.pks)])
        : req.afterPk === undefined
          ? await tx.unsafe(`${from} ORDER BY pk LIMIT $1::text::bigint`, [String(req.limit ?? 1000)])
          : await tx.unsafe(`${from} WHERE pk > $1::text ORDER BY pk LIMIT $2::text::bigint`, [req.afterPk, String(req.limit ?? 1000)]);
      return rows.map((r) => ({ pk: String(r.pk), textHash: String(r.text_hash), metaHash: String(r.meta_hash) }));
    });
  }

  async docs(ref: string, pks: string[], target?: PlatformTarget): Promise<Map<string, StoredDoc>> {
    const out = new Map<string, StoredDoc>();
    if (pks.length === 0) return out;
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table } = resolve(family, ref, target);
      const rows = await tx.unsafe(`SELECT pk, text, embedding::text AS vec FROM ${qualified(table)} WHERE pk IN (SELECT jsonb_array_elements_text($1::text::jsonb))`, [JSON.stringify(pks)]);
      for (const r of rows) out.set(String(r.pk), { text: String(r.text), vector: parseVectorText(String(r.vec)) });
      return out;
    });
  }

  async count(ref: string, filter?: unknown, target?: PlatformTarget): Promise<number> {
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, target);
      const params: Param[] = [];
      const where = compilePg(parseFilter(filter, comment.spec.metadata), comment.spec.metadata, params);
      const rows = await tx.unsafe(`SELECT count(*)::text AS n FROM ${qualified(table)} WHERE ${where}`, params);
      return Number(rows[0]?.n ?? 0);
    });
  }

  async search(ref: string, req: SearchRequest): Promise<PlatformSearchResult> {
    return this.withFamily(ref, "shared", async (tx, family) => {
      const { table, comment } = resolve(family, ref, {});
      const node = parseFilter(req.filter, comment.spec.metadata);
      return searchTable(tx as unknown as Runner, table, comment, node, req);
    });
  }

  async generations(ref: string): Promise<PlatformGenerations> {
    return this.withFamily(ref, "shared", async (_tx, family) => {
      const { comment } = resolve(family, ref, {});
      return { live: comment.generation, building: [...family.building.keys()].sort((a, b) => a - b) };
    });
  }

  async createGeneration(ref: string, spec: GenerationSpec): Promise<number> {
    assertSpec(spec);
    return this.withFamily(ref, "exclusive", async (tx, family) => {
      const { comment } = resolve(family, ref, {});
      const generation = Math.max(comment.generation, ...family.building.keys()) + 1;
      for (const statement of createTableStatements(buildingTable(family.base, generation), { ref, generation, spec })) await tx.unsafe(statement);
      return generation;
    });
  }

  async swapGeneration(ref: string, generation: number): Promise<void> {
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      resolve(family, ref, {});
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      await tx.unsafe(`DROP TABLE ${qualified(family.base)}`);
      await tx.unsafe(`ALTER TABLE ${qualified(buildingTable(family.base, generation))} RENAME TO ${quoteIdent(family.base)}`);
    });
  }

  async dropGeneration(ref: string, generation: number): Promise<void> {
    await this.withFamily(ref, "exclusive", async (tx, family) => {
      if (!family.building.has(generation)) throw noGeneration(ref, generation);
      await tx.unsafe(`DROP TABLE ${qualified(buildingTable(family.base, generation))}`);
    });
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.sql.end({ timeout: 5 });
  }

  /** Schema and extension, once per database; serialized because neither IF NOT EXISTS is race-free. */
  private async setup(): Promise<void> {
    await this.run(async () => {
      await this.sql.begin(async (tx) => {
        await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended('vecsync:platform-setup', 0))");
        await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${PLATFORM_SCHEMA}`);
        try {
          await tx.unsafe("CREATE EXTENSION IF NOT EXISTS vector");
        } catch (e) {
          const reason = e instanceof Error ? e.message : String(e);
          throw new DriverError(`pgvector is not available on the source database (CREATE EXTENSION vector failed: ${reason})`, { retryable: false, cause: e });
        }
      });
    });
  }

  /** One transaction holding the ref's advisory lock, with the ref's tables read after taking it. */
  private async withFamily<T>(ref: string, mode: "shared" | "exclusive", fn: (tx: Tx, family: Family) => Promise<T>): Promise<T> {
    const base = baseOf(ref);
    return this.run(() =>
      this.sql.begin(async (tx) => {
        const lock = mode === "shared" ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock";
        await tx.unsafe(`SELECT ${lock}(hashtextextended($1::text, 0))`, [`vecsync:${ref}`]);
        return fn(tx, await readFamily(tx, ref, base));
      }) as Promise<T>,
    );
  }

  /** Our own errors pass through; Postgres and network failures become DriverErrors. */
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof VectorStoreError || e instanceof FilterError || e instanceof DriverError) throw e;
      throw driverError(e);
    }
  }
}

async function readFamily(tx: Tx, ref: string, base: string): Promise<Family> {
  const rows = await tx.unsafe(
    `SELECT c.relname, obj_description(c.oid, 'pg_class') AS comment FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1::text AND c.relkind = 'r' AND (c.relname = $2::text OR c.relname LIKE $3::text)`,
    [PLATFORM_SCHEMA, base, buildingPattern(base)],
  );
  const family: Family = { base, live: null, building: new Map() };
  for (const row of rows) {
    const comment = parseComment(row.comment);
    if (!comment || comment.ref !== ref) continue;
    if (row.relname === base) family.live = comment;
    else if (row.relname === buildingTable(base, comment.generation)) family.building.set(comment.generation, comment);
  }
  return family;
}

function resolve(family: Family, ref: string, target: PlatformTarget = {}): Resolved {
  if (!family.live) throw new VectorStoreError("collection_not_found", `no platform table ${ref}`);
  const g = target.generation;
  if (g === undefined || g === family.live.generation) return { table: family.base, comment: family.live };
  const building = family.building.get(g);
  if (!building) throw noGeneration(ref, g);
  return { table: buildingTable(family.base, g), comment: building };
}

function noGeneration(ref: string, generation: number): VectorStoreError {
  return new VectorStoreError("generation_not_found", `platform table ${ref} has no building generation ${generation}`);
}

/** SQLSTATE classes worth a retry: connection (08), rollback (40), resources (53), operator (57). */
function driverError(e: unknown): DriverError {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "";
  const isSqlState = /^[0-9A-Z]{5}$/.test(code);
  const retryable = !isSqlState || ["08", "40", "53", "57"].includes(code.slice(0, 2));
  const message = e instanceof Error ? e.message : String(e);
  return new DriverError(`platform vector store: ${message}`, { retryable, cause: e, context: code ? { sqlstate: code } : {} });
}
