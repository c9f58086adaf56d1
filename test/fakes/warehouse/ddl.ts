// Warehouse statements DuckDB has no spelling for, done here in DuckDB's terms (see README.md):
//  - `CREATE TABLE … (…) COMMENT = '…'`: the table, then DuckDB's COMMENT ON TABLE;
//  - `ALTER TABLE a SWAP WITH b`: three renames in one DuckDB transaction (the warehouse swaps
//    names atomically; each table keeps its data, columns and comment);
//  - MERGE: DuckDB's MERGE with `RETURNING merge_action`, answered as the warehouse answers a
//    MERGE: one row of "number of rows inserted/updated/deleted", a column per kind of clause;
//  - access control: a user without write grants gets the warehouse's 003001 on any write.
import { WarehouseSqlError } from "./errors.ts";

const PART = String.raw`(?:"[^"]*"|[A-Z_][A-Z0-9_$]*)`;
export const REF = String.raw`(${PART}(?:\s*\.\s*${PART})*)`;

export const CREATE_COMMENT = /^(CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b[\s\S]*\))\s*COMMENT\s*=\s*('(?:[^']|'')*')\s*$/;
export const SWAP = new RegExp(String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?${REF}\s+SWAP\s+WITH\s+${REF}\s*$`);
export const MERGE = new RegExp(String.raw`^MERGE\s+INTO\s+${REF}`);

/** A table reference's schema (the session's PUBLIC when unqualified) and name, unquoted. */
export interface TableKey {
  schema: string;
  name: string;
}

const unquote = (part: string) => part.trim().replace(/^"|"$/g, "").replaceAll('""', '"');

export function tableKey(ref: string): TableKey {
  const parts = ref.match(new RegExp(PART, "g")) ?? [];
  const name = unquote(parts.at(-1) ?? "");
  return { schema: parts.length >= 2 ? unquote(parts.at(-2)!) : "PUBLIC", name };
}

/** The qualified DuckDB name of a key in the fake's one database. */
export const qualifiedName = (database: string, key: TableKey) => [database, key.schema, key.name].map((p) => `"${p.replaceAll('"', '""')}"`).join(".");

/** The statements a `CREATE TABLE … COMMENT = '…'` becomes. */
export function splitCreateComment(sql: string, table: string): string[] | null {
  const m = CREATE_COMMENT.exec(sql);
  return m ? [m[1]!, `COMMENT ON TABLE ${table} IS ${m[2]}`] : null;
}

/** The three renames of a swap; the caller runs them in one transaction. */
export function swapStatements(database: string, a: TableKey, b: TableKey): string[] {
  if (a.schema !== b.schema) throw new WarehouseSqlError("002003", "SQL compilation error:\nSWAP WITH needs two tables of the same schema in the fake.", "42S02");
  const spare = `${a.name}__fake_swap`;
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  return [
    `ALTER TABLE ${qualifiedName(database, a)} RENAME TO ${quote(spare)}`,
    `ALTER TABLE ${qualifiedName(database, b)} RENAME TO ${quote(a.name)}`,
    `ALTER TABLE ${qualifiedName(database, { schema: a.schema, name: spare })} RENAME TO ${quote(b.name)}`,
  ];
}

/** The warehouse's MERGE answer from DuckDB's `RETURNING merge_action` rows. */
export function mergeCounts(sql: string, actions: unknown[][]): { columns: string[]; row: string[] } {
  const count = (action: string) => String(actions.filter((r) => r[0] === action).length);
  const columns: string[] = [];
  const row: string[] = [];
  if (/\bTHEN\s+INSERT\b/.test(sql)) columns.push("number of rows inserted"), row.push(count("INSERT"));
  if (/\bTHEN\s+UPDATE\b/.test(sql)) columns.push("number of rows updated"), row.push(count("UPDATE"));
  if (/\bTHEN\s+DELETE\b/.test(sql)) columns.push("number of rows deleted"), row.push(count("DELETE"));
  return { columns, row };
}

const WRITE = /^(CREATE|ALTER\s+TABLE|DROP|INSERT|MERGE|UPDATE|DELETE|TRUNCATE|COMMENT)\b/i;

/**
 * What a user without write grants may not do, in the warehouse's words: creating a schema needs
 * a grant on the database, creating a table one on the schema, anything else one on the object.
 */
export function accessDenied(sql: string, database: string): WarehouseSqlError | null {
  if (!WRITE.test(sql)) return null;
  const schema = new RegExp(String.raw`^CREATE\s+SCHEMA\s+(?:IF\s+NOT\s+EXISTS\s+)?${REF}`, "i").exec(sql);
  const table = new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${REF}`, "i").exec(sql);
  const target = new RegExp(String.raw`^(?:ALTER\s+TABLE|DROP\s+TABLE|INSERT\s+INTO|MERGE\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|COMMENT\s+ON\s+TABLE)\s+(?:IF\s+EXISTS\s+)?${REF}`, "i").exec(sql);
  const what = schema ? `database '${database}'` : table ? `schema '${tableKey(table[1]!).schema}'` : target ? `table '${tableKey(target[1]!).name}'` : `database '${database}'`;
  return new WarehouseSqlError("003001", `SQL access control error:\nInsufficient privileges to operate on ${what}`, "42501");
}
