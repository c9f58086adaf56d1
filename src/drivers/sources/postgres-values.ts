// How Postgres text turns into SourceValues, shared by queries (postgres.js parsers) and the CDC
// decoder (pgoutput sends text), so a key read by a scan equals the same key read from the WAL.
// The session settings pin every output function whose text feeds a value or a hash.
import type { SourceValue } from "./types.ts";

/**
 * Session settings of every sync connection. Row hashes are `md5(row(...)::text)`, and a row's
 * text depends on these, so they must not vary with the server's or the role's defaults.
 * extra_float_digits=1 gives the shortest text that reads back to the same float (PG 12+).
 */
export const SESSION_SETTINGS = {
  application_name: "vecsync",
  TimeZone: "UTC",
  DateStyle: "ISO, YMD",
  IntervalStyle: "postgres",
  extra_float_digits: 1,
  bytea_output: "hex",
} as const;

const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

const asText = (text: string): string => text;

/** int8 as a number while exact, else the digits as a string (JSON has no 64-bit integers). */
function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** `2024-01-02 03:04:05.5` → `2024-01-02T03:04:05.5`; infinity and BC dates stay as they are. */
function isoTimestamp(text: string): string {
  return /^\d{4,}-\d\d-\d\d \d/.test(text) && !text.endsWith(" BC") ? text.replace(" ", "T") : text;
}

/** With TimeZone=UTC the offset is always `+00`: `2024-01-02 03:04:05+00` → `…T03:04:05Z`. */
function isoTimestamptz(text: string): string {
  const iso = isoTimestamp(text);
  return iso !== text && iso.endsWith("+00") ? `${iso.slice(0, -3)}Z` : iso;
}

const PARSERS = new Map<number, (text: string) => SourceValue>([
  [OID.bool, (t) => t === "t"],
  [OID.int2, Number],
  [OID.int4, Number],
  [OID.oid, Number],
  [OID.float4, Number],
  [OID.float8, Number],
  [OID.int8, parseInt8],
  [OID.timestamp, isoTimestamp],
  [OID.timestamptz, isoTimestamptz],
]);

/** A value of type `oid` in Postgres text form; unknown types, arrays and json stay text. */
export function parseValue(oid: number, text: string): SourceValue {
  const parse = PARSERS.get(oid);
  return parse ? parse(text) : text;
}

// postgres.js custom types. Serialize as plain text too: with prepared statements postgres.js
// picks the serializer by the parameter's type, and its default timestamptz serializer goes
// through a JS Date, which drops microseconds and would break keyset pagination on timestamps.
const typeEntry = (oids: number[], parse: (text: string) => SourceValue) => ({
  to: oids[0]!,
  from: oids,
  serialize: (value: unknown) => String(value),
  parse,
});

export const POSTGRES_TYPES = {
  vs_int8: typeEntry([OID.int8], parseInt8),
  vs_timestamp: typeEntry([OID.timestamp], isoTimestamp),
  vs_timestamptz: typeEntry([OID.timestamptz], isoTimestamptz),
  vs_text: typeEntry([OID.date, OID.json, OID.jsonb, OID.bytea, OID.numeric], asText),
};
