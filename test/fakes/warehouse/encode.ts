// DuckDB values → Snowflake's JSON result format: every value a string (or null), numbers as
// decimal text, booleans "1"/"0", dates as days since the epoch, timestamps as epoch seconds
// with nine fraction digits, semi-structured and vectors as JSON text; a `rowtype` entry per
// column with Snowflake's type name, precision and scale, column names upper-cased.
import type { DuckDBType } from "@duckdb/node-api";

export interface RowType {
  name: string;
  type: string;
  nullable: boolean;
  scale: number | null;
  precision: number | null;
  length: number | null;
  byteLength: number | null;
  database: string;
  schema: string;
  table: string;
  collation: null;
}

export interface EncodedResult {
  statementTypeId: number;
  rowtype: RowType[];
  rows: (string | null)[][];
}

type Encoder = { type: string; precision?: number; scale?: number; length?: number; encode: (v: unknown) => string };

const text = (v: unknown) => String(v);

function epochSeconds(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const seconds = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0") + "000";
  return `${negative ? "-" : ""}${seconds}.${fraction}`;
}

function jsonText(v: unknown): string {
  if (v && typeof v === "object" && "items" in v) return JSON.stringify((v as { items: unknown[] }).items.map((x) => (typeof x === "bigint" ? Number(x) : x)));
  return String(v);
}

function encoderFor(type: DuckDBType): Encoder {
  const name = String(type);
  const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(name);
  if (decimal) return { type: "fixed", precision: Number(decimal[1]), scale: Number(decimal[2]), encode: text };
  if (/^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/.test(name)) return { type: "fixed", precision: 38, scale: 0, encode: text };
  if (name === "DOUBLE" || name === "FLOAT") return { type: "real", encode: text };
  if (name === "BOOLEAN") return { type: "boolean", encode: (v) => (v ? "1" : "0") };
  if (name === "DATE") return { type: "date", encode: (v) => String((v as { days: number }).days) };
  if (name === "TIME") return { type: "time", scale: 9, encode: (v) => epochSeconds((v as { micros: bigint }).micros) };
  if (name === "TIMESTAMP") return { type: "timestamp_ntz", scale: 9, encode: (v) => epochSeconds((v as { micros: bigint }).micros) };
  if (name === "TIMESTAMP WITH TIME ZONE") return { type: "timestamp_ltz", scale: 9, encode: (v) => epochSeconds((v as { micros: bigint }).micros) };
  if (/\[\d+\]$/.test(name)) return { type: "vector", encode: jsonText };
  if (/\[\]$/.test(name)) return { type: "array", encode: jsonText };
  if (name === "JSON") return { type: "variant", encode: text };
  if (name === "BLOB") return { type: "binary", encode: (v) => Buffer.from((v as { bytes: Uint8Array }).bytes).toString("hex").toUpperCase() };
  return { type: "text", length: 16777216, encode: text };
}

export function encodeResult(
  columns: { name: string; type: DuckDBType }[],
  rows: unknown[][],
  opts: { statementTypeId: number; countColumn?: string },
): EncodedResult {
  const encoders = columns.map((c) => encoderFor(c.type));
  const rowtype = columns.map((c, i): RowType => {
    const e = encoders[i]!;
    const name = opts.countColumn && c.name === "Count" ? opts.countColumn : c.name.toUpperCase();
    return { name, type: e.type, nullable: true, scale: e.scale ?? null, precision: e.precision ?? null, length: e.length ?? null, byteLength: e.length ?? null, database: "", schema: "", table: "", collation: null };
  });
  return {
    statementTypeId: opts.statementTypeId,
    rowtype,
    rows: rows.map((row) => row.map((v, i) => (v === null || v === undefined ? null : encoders[i]!.encode(v)))),
  };
}

/** A DML answer: one row of counts (e.g. a MERGE's "number of rows inserted", "… updated", "… deleted"). */
export function countsResult(statementTypeId: number, columns: string[], row: string[]): EncodedResult {
  const rowtype = columns.map((name): RowType => ({ name, type: "fixed", nullable: false, scale: 0, precision: 38, length: null, byteLength: null, database: "", schema: "", table: "", collation: null }));
  return { statementTypeId, rowtype, rows: [row] };
}
