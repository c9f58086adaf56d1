// The warehouse driver's SQL: quoted identifiers, keyset conditions spelled out column by column
// (no row-value comparison in the warehouse's dialect), the hash formula, the CHANGES query, and
// the conversion of result values to SourceValues.
import type { ColumnInfo } from "./warehouse-connect.ts";
import type { Key, SourceValue } from "./types.ts";

export type BindValue = string | number | boolean | null;
export interface Statement {
  text: string;
  binds: BindValue[];
}

/** A resolved table: its catalog names and its quoted SQL reference. */
export interface TableRef {
  schema: string;
  name: string;
  sql: string;
}

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `(a > ?) OR (a = ? AND b > ?) …` — rows strictly after `after` in (a, b, …) order. */
export function keysetCondition(pk: string[], after: Key): Statement {
  const alternatives: string[] = [];
  const binds: BindValue[] = [];
  pk.forEach((column, i) => {
    const equal = pk.slice(0, i).map((c, j) => {
      binds.push(after[j]!);
      return `${quoteIdent(c)} = ?`;
    });
    binds.push(after[i]!);
    alternatives.push(`(${[...equal, `${quoteIdent(column)} > ?`].join(" AND ")})`);
  });
  return { text: `(${alternatives.join(" OR ")})`, binds };
}

function page(ref: TableRef, pk: string[], select: string, afterPk: Key | null, limit: number): Statement {
  const where = afterPk ? keysetCondition(pk, afterPk) : null;
  return {
    text: `SELECT ${select} FROM ${ref.sql}${where ? ` WHERE ${where.text}` : ""} ORDER BY ${pk.map(quoteIdent).join(", ")} LIMIT ${limit}`,
    binds: where?.binds ?? [],
  };
}

export function scanStatement(ref: TableRef, pk: string[], columns: string[], afterPk: Key | null, limit: number): Statement {
  return page(ref, pk, [...pk, ...columns].map(quoteIdent).join(", "), afterPk, limit);
}

/**
 * 128 bits of SHA-256 over the columns' text, each column encoded as `v<length>:<text>` or `n`
 * for NULL and joined by commas: the length prefix keeps the encoding injective (no separator
 * or marker inside a value can make two rows collide), and NULL differs from ''. CONCAT_WS
 * alone would not do: it answers NULL when any argument is NULL.
 */
export function hashExpression(columns: string[]): string {
  if (columns.length === 0) return "LEFT(SHA2('', 256), 32)";
  const encoded = columns.map((c) => {
    const text = `CAST(${quoteIdent(c)} AS VARCHAR)`;
    return `COALESCE('v' || CAST(LENGTH(${text}) AS VARCHAR) || ':' || ${text}, 'n')`;
  });
  return `LEFT(SHA2(CONCAT_WS(',', ${encoded.join(", ")}), 256), 32)`;
}

const hashSelect = (pk: string[], textColumns: string[], metaColumns: string[]) => [...pk.map(quoteIdent), hashExpression(textColumns), hashExpression(metaColumns)].join(", ");

export function hashStatement(ref: TableRef, pk: string[], textColumns: string[], metaColumns: string[], afterPk: Key | null, limit: number): Statement {
  return page(ref, pk, hashSelect(pk, textColumns, metaColumns), afterPk, limit);
}

/** `a IN (?, ?)`, or `(a = ? AND b = ?) OR …` for a composite key. */
function keysCondition(pk: string[], keys: Key[]): Statement {
  if (pk.length === 1) return { text: `${quoteIdent(pk[0]!)} IN (${keys.map(() => "?").join(", ")})`, binds: keys.map((k) => k[0]!) };
  const binds: BindValue[] = [];
  const text = keys
    .map((key) => {
      binds.push(...key);
      return `(${pk.map((c) => `${quoteIdent(c)} = ?`).join(" AND ")})`;
    })
    .join(" OR ");
  return { text, binds };
}

export function fetchStatement(ref: TableRef, pk: string[], columns: string[], keys: Key[]): Statement {
  const where = keysCondition(pk, keys);
  return { text: `SELECT ${[...pk, ...columns].map(quoteIdent).join(", ")} FROM ${ref.sql} WHERE ${where.text}`, binds: where.binds };
}

/** Rows among `keys`, their hashes: the select list of `hashStatement`, so the two always agree. */
export function keyHashStatement(ref: TableRef, pk: string[], textColumns: string[], metaColumns: string[], keys: Key[]): Statement {
  const where = keysCondition(pk, keys);
  return { text: `SELECT ${hashSelect(pk, textColumns, metaColumns)} FROM ${ref.sql} WHERE ${where.text}`, binds: where.binds };
}

/** Distinct keys changed between two instants (ms since the epoch), at most `limit`. */
export function changesStatement(ref: TableRef, pk: string[], atMs: number, endMs: number, limit: number): Statement {
  const keys = pk.map(quoteIdent).join(", ");
  return {
    text:
      `SELECT DISTINCT ${keys} FROM ${ref.sql} CHANGES(INFORMATION => DEFAULT) ` +
      `AT(TIMESTAMP => TO_TIMESTAMP_LTZ(${atMs}, 3)) END(TIMESTAMP => TO_TIMESTAMP_LTZ(${endMs}, 3)) ORDER BY ${keys} LIMIT ${limit}`,
    binds: [],
  };
}

function isoOf(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/**
 * A result value → SourceValue (types.ts): integers as numbers unless past 2^53 (then text),
 * NUMBER with a scale as text like Postgres numeric, dates as YYYY-MM-DD, timestamps as ISO 8601
 * UTC (millisecond precision: the SDK's Date), semi-structured values as their JSON text.
 */
export function toSourceValue(value: unknown, column: ColumnInfo): SourceValue {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case "fixed": {
      const text = String(value);
      if (column.scale > 0) return text;
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : text;
    }
    case "real":
      return Number(value);
    case "boolean":
      return value === true || value === "true" || value === "1";
    case "date":
      return isoOf(value).slice(0, 10);
    case "timestamp_ntz":
    case "timestamp_ltz":
    case "timestamp_tz":
      return isoOf(value);
    default:
      return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : String(value);
  }
}
