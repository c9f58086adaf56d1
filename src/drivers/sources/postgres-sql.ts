// SQL text for the Postgres source: every identifier quoted, every value a parameter. Keyset
// pagination compares the key as a row, `(a, b) > ($1, $2)`, which Postgres answers from the
// primary-key index in key order for single and composite keys alike.
import type { Key, TextLimit } from "./types.ts";

export function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes("\0")) throw new Error(`invalid identifier ${JSON.stringify(name)}`);
  return `"${name.replaceAll('"', '""')}"`;
}

/** A resolved table: its schema, its name, and the quoted `"schema"."name"` to put in SQL. */
export interface TableRef {
  schema: string;
  name: string;
  sql: string;
}

/**
 * The spelling to try first: the given name taken literally (`Articles` is the table called
 * `Articles`); `schema.table` splits on the first dot. Postgres' own folding of unquoted names
 * is the fallback (see resolveTable in postgres.ts).
 */
export function exactTableName(table: string): string {
  const dot = table.indexOf(".");
  if (table.startsWith('"') || dot <= 0) return table.startsWith('"') ? table : quoteIdent(table);
  return `${quoteIdent(table.slice(0, dot))}.${quoteIdent(table.slice(dot + 1))}`;
}

const list = (names: string[]) => names.map(quoteIdent).join(", ");

/** `"a" > $1` or `("a", "b") > ($1, $2)`, parameters numbered from `first`. */
function keyAfter(pk: string[], first: number): string {
  const params = pk.map((_, i) => `$${first + i}`);
  return pk.length === 1 ? `${quoteIdent(pk[0]!)} > ${params[0]}` : `(${list(pk)}) > (${params.join(", ")})`;
}

/** Key columns first, then the other columns once each. */
export function selectColumns(pk: string[], columns: string[]): string[] {
  return [...pk, ...columns.filter((c, i) => !pk.includes(c) && columns.indexOf(c) === i)];
}

export interface Statement {
  text: string;
  params: (string | number | boolean)[];
}

function page(table: TableRef, pk: string[], select: string, afterPk: Key | null, limit: number): Statement {
  if (afterPk && afterPk.length !== pk.length) throw new Error(`afterPk has ${afterPk.length} values for ${pk.length} key columns`);
  const where = afterPk ? ` WHERE ${keyAfter(pk, 1)}` : "";
  const params = [...(afterPk ?? []), limit];
  return { text: `SELECT ${select} FROM ${table.sql}${where} ORDER BY ${list(pk)} LIMIT $${params.length}`, params };
}

export function scanStatement(table: TableRef, pk: string[], columns: string[], afterPk: Key | null, limit: number): Statement {
  return page(table, pk, list(selectColumns(pk, columns)), afterPk, limit);
}

/** `md5(row(c1, c2, …)::text)`: NULL prints as nothing and '' as `""`, so the two differ. */
export function rowMd5(columns: string[]): string {
  return `md5(row(${list(columns)})::text)`;
}

const hashSelect = (pk: string[], textColumns: string[], metaColumns: string[]) => `${list(pk)}, ${rowMd5(textColumns)}, ${rowMd5(metaColumns)}`;

export function hashStatement(table: TableRef, pk: string[], textColumns: string[], metaColumns: string[], afterPk: Key | null, limit: number): Statement {
  return page(table, pk, hashSelect(pk, textColumns, metaColumns), afterPk, limit);
}

/** `"a" IN ($1, $2)` or `("a", "b") IN (($1, $2), ($3, $4))`, parameters numbered from 1. */
function keysIn(pk: string[], keys: Key[]): Statement {
  const params: (string | number | boolean)[] = [];
  const tuples = keys.map((key) => {
    if (key.length !== pk.length) throw new Error(`a key has ${key.length} values for ${pk.length} key columns`);
    const refs = key.map((value) => `$${params.push(value)}`);
    return pk.length === 1 ? refs[0]! : `(${refs.join(", ")})`;
  });
  const lhs = pk.length === 1 ? quoteIdent(pk[0]!) : `(${list(pk)})`;
  return { text: `${lhs} IN (${tuples.join(", ")})`, params };
}

/**
 * Rows among `keys`, their columns. With `limit`: its columns read only while their text comes to
 * at most `maxBytes` together, and one more column, their bytes when over (else null), so a row
 * of megabytes costs a number on the wire. `octet_length` of a `text` value reads its TOAST
 * header, not the value.
 */
export function fetchStatement(table: TableRef, pk: string[], columns: string[], keys: Key[], limit?: TextLimit): Statement {
  const where = keysIn(pk, keys);
  const names = selectColumns(pk, columns);
  let select = list(names);
  if (limit && limit.columns.length > 0) {
    const bytes = limit.columns.map((c) => `coalesce(octet_length(${quoteIdent(c)}::text), 0)::int8`).join(" + ");
    const over = `(${bytes}) > ${Math.floor(limit.maxBytes)}`;
    const held = (c: string) => limit.columns.includes(c) && !pk.includes(c);
    select = `${names.map((c) => (held(c) ? `CASE WHEN ${over} THEN NULL ELSE ${quoteIdent(c)} END` : quoteIdent(c))).join(", ")}, CASE WHEN ${over} THEN ${bytes} END`;
  }
  return { text: `SELECT ${select} FROM ${table.sql} WHERE ${where.text} ORDER BY ${list(pk)}`, params: where.params };
}

/** Rows among `keys`, their hashes: the select list of `hashStatement`, so the two always agree. */
export function keyHashStatement(table: TableRef, pk: string[], textColumns: string[], metaColumns: string[], keys: Key[]): Statement {
  const where = keysIn(pk, keys);
  return { text: `SELECT ${hashSelect(pk, textColumns, metaColumns)} FROM ${table.sql} WHERE ${where.text} ORDER BY ${list(pk)}`, params: where.params };
}
