// The tables of one platform ref as the catalog shows them: the live table (named by the ref) and
// its building generations, each known by the `{ref, generation, spec}` in its comment, so a
// table that merely looks like ours (a user's, another ref's) is never taken for one.
import type postgres from "postgres";
import { VectorStoreError } from "../store-api/index.ts";
import { buildingPattern, buildingTable, parseComment, PLATFORM_SCHEMA, type TableComment } from "./pgvector-schema.ts";
import type { PlatformTarget } from "./types.ts";

/** The tables of one ref: the live one (when it exists) and its building generations. */
export interface Family {
  base: string;
  live: TableComment | null;
  /** The live table's OID: a search checks it to know which table it read (pgvector-query.ts). */
  liveOid: number | null;
  building: Map<number, TableComment>;
}

/** The ref's advisory lock: shared for row work and searches, exclusive for DDL (pgvector.ts). */
export type LockMode = "shared" | "exclusive";

/** One transaction holding the ref's lock, with the ref's tables read after taking it (PgvectorStore). */
export type WithFamily = <T>(ref: string, mode: LockMode, fn: (tx: postgres.TransactionSql, family: Family) => Promise<T>) => Promise<T>;

/** A resolved target: the table to use and its generation's shape. */
export interface Resolved {
  table: string;
  comment: TableComment;
}


export function readFamily(tx: postgres.TransactionSql, base: string) {
  return tx.unsafe(
    `SELECT c.relname, c.oid::text::int8 AS oid, obj_description(c.oid, 'pg_class') AS comment FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1::text AND c.relkind = 'r' AND (c.relname = $2::text OR c.relname LIKE $3::text)`,
    [PLATFORM_SCHEMA, base, buildingPattern(base)],
  );
}

export function familyOf(rows: Record<string, unknown>[], ref: string, base: string): Family {
  const family: Family = { base, live: null, liveOid: null, building: new Map() };
  for (const row of rows) {
    const comment = parseComment(row.comment);
    if (!comment || comment.ref !== ref) continue;
    if (row.relname === base) {
      family.live = comment;
      family.liveOid = Number(row.oid);
    } else if (row.relname === buildingTable(base, comment.generation)) family.building.set(comment.generation, comment);
  }
  return family;
}

export function resolve(family: Family, ref: string, target: PlatformTarget = {}): Resolved {
  if (!family.live) throw new VectorStoreError("collection_not_found", `no platform table ${ref}`);
  const g = target.generation;
  if (g === undefined || g === family.live.generation) return { table: family.base, comment: family.live };
  const building = family.building.get(g);
  if (!building) throw noGeneration(ref, g);
  return { table: buildingTable(family.base, g), comment: building };
}

export function noGeneration(ref: string, generation: number): VectorStoreError {
  return new VectorStoreError("generation_not_found", `platform table ${ref} has no generation ${generation}`);
}
