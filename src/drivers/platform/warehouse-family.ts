// The tables of one ref, read from the catalog: the live table, its building generations, and
// leftovers of a swap whose DROP never ran. A table's COMMENT says which generation it holds (the
// name alone cannot: SWAP WITH moves names, not comments), so a table is the live one when it has
// the base name, a building one when its name matches its comment, and a leftover otherwise.
import type { QueryResult } from "../sources/warehouse-connect.ts";
import { VectorStoreError } from "../store-api/index.ts";
import type { PlatformTarget } from "./types.ts";
import type { Bind } from "./warehouse-filters.ts";
import { buildingTable, parseComment, PLATFORM_SCHEMA, quoteIdent, tableSql, type ParsedRef, type TableComment, type WarehouseSpec } from "./warehouse-schema.ts";

export interface Family {
  ref: ParsedRef;
  live: TableComment | null;
  building: Map<number, TableComment>;
  /** Tables of the ref whose name does not match their comment: dropped by the next DDL. */
  stale: string[];
  /** The highest generation any table of the ref is named or commented with. */
  highest: number;
}

/** A resolved target: the table's SQL name and its generation's shape. */
export interface Resolved {
  table: string;
  spec: WarehouseSpec;
}

export async function readFamily(run: (sql: string, binds: Bind[]) => Promise<QueryResult>, ref: string, parsed: ParsedRef): Promise<Family> {
  const prefix = `${parsed.base}__G`;
  const result = await run(
    `SELECT TABLE_NAME, COMMENT FROM ${quoteIdent(parsed.database)}.INFORMATION_SCHEMA.TABLES
     WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND (TABLE_NAME = ? OR LEFT(TABLE_NAME, ?) = ?)`,
    [PLATFORM_SCHEMA, parsed.base, prefix.length, prefix],
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

export function resolveLive(family: Family, ref: string): TableComment {
  if (!family.live) throw new VectorStoreError("collection_not_found", `no platform table ${ref}`);
  return family.live;
}

export function resolve(family: Family, ref: string, target: PlatformTarget = {}): Resolved {
  const live = resolveLive(family, ref);
  const g = target.generation;
  if (g === undefined || g === live.generation) return { table: tableSql(family.ref, family.ref.base), spec: live.spec };
  const building = family.building.get(g);
  if (!building) throw noGeneration(ref, g);
  return { table: tableSql(family.ref, buildingTable(family.ref.base, g)), spec: building.spec };
}

export function noGeneration(ref: string, generation: number): VectorStoreError {
  return new VectorStoreError("generation_not_found", `platform table ${ref} has no generation ${generation} (it is not live or building)`);
}
