// Snowflake SQL → DuckDB SQL, for the small subset the warehouse driver and its tests use (see
// README.md). A token pass folds unquoted identifiers to upper case (Snowflake's rule, so the
// catalog shows ITEMS/ID), inlines binds as literals (Snowflake casts '42' to a number where a
// number is expected; DuckDB does so for literals but not for typed parameters), converts string
// escapes and maps type names in DDL; a few regex rewrites then handle the function spellings.

export type Bind = { type: string; value: string | null };

type Token = { kind: "word" | "quoted" | "string" | "other"; text: string };

const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;

function readString(sql: string, start: number): { value: string; end: number } {
  let value = "";
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "\\" && i + 1 < sql.length) {
      const n = sql[i + 1]!;
      value += n === "n" ? "\n" : n === "t" ? "\t" : n === "0" ? "\0" : n;
      i += 2;
    } else if (c === "'" && sql[i + 1] === "'") {
      value += "'";
      i += 2;
    } else if (c === "'") {
      return { value, end: i + 1 };
    } else {
      value += c;
      i++;
    }
  }
  throw new SqlSyntaxError("unterminated string literal");
}

export class SqlSyntaxError extends Error {}

export const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    WORD.lastIndex = i;
    const word = WORD.exec(sql);
    if (word) {
      tokens.push({ kind: "word", text: word[0].toUpperCase() });
      i += word[0].length;
    } else if (c === "'") {
      const { value, end } = readString(sql, i);
      tokens.push({ kind: "string", text: literal(value) });
      i = end;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      if (end < 0) throw new SqlSyntaxError("unterminated quoted identifier");
      tokens.push({ kind: "quoted", text: sql.slice(i, end + 1) });
      i = end + 1;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else {
      tokens.push({ kind: "other", text: c });
      i++;
    }
  }
  return tokens;
}

function bindLiteral(bind: Bind | undefined, position: number): string {
  if (!bind) throw new SqlSyntaxError(`bind variable ${position} has no value`);
  if (bind.value === null) return "NULL";
  switch (bind.type) {
    case "FIXED":
    case "REAL":
      if (!/^-?[0-9.eE+-]+$/.test(bind.value)) throw new SqlSyntaxError(`bind ${position} is not a number`);
      return bind.value;
    case "BOOLEAN":
      return bind.value === "true" ? "TRUE" : "FALSE";
    default:
      return literal(bind.value);
  }
}

/** Snowflake type names (as written in DDL or after `::`) → DuckDB; null keeps the word. */
function duckType(word: string, next: () => Token | undefined): string | null {
  switch (word) {
    case "NUMBER":
    case "NUMERIC":
      return next()?.text === "(" ? "DECIMAL" : "DECIMAL(38,0)";
    case "INTEGER":
    case "INT":
    case "BIGINT":
    case "SMALLINT":
    case "TINYINT":
    case "BYTEINT":
      return "DECIMAL(38,0)";
    case "STRING":
    case "TEXT":
      return "VARCHAR";
    case "FLOAT":
    case "FLOAT4":
    case "FLOAT8":
    case "REAL":
      return "DOUBLE";
    case "TIMESTAMP_NTZ":
    case "DATETIME":
      return "TIMESTAMP";
    case "TIMESTAMP_LTZ":
    case "TIMESTAMP_TZ":
      return "TIMESTAMPTZ";
    case "VARIANT":
    case "OBJECT":
    case "ARRAY":
      return "JSON";
    default:
      return null;
  }
}

/** Folds identifiers, inlines binds and maps DDL types; answers DuckDB-ready text. */
function rewriteTokens(sql: string, binds: Record<string, Bind>): string {
  const tokens = tokenize(sql);
  const isCreateTable = tokens.some((t) => t.text === "CREATE") && tokens.some((t) => t.text === "TABLE");
  const significant = (i: number, step: number) => {
    for (let j = i + step; j >= 0 && j < tokens.length; j += step) if (!/^\s$/.test(tokens[j]!.text)) return tokens[j];
    return undefined;
  };
  let depth = 0;
  let nextBind = 1;
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === "(") depth++;
    if (t.text === ")") depth--;
    if (t.text === "?") {
      out.push(bindLiteral(binds[String(nextBind)], nextBind));
      nextBind++;
      continue;
    }
    if (t.text === ":" && significant(i, 1)?.kind === "other" && /^\d$/.test(tokens[i + 1]?.text ?? "")) {
      let digits = "";
      while (/^\d$/.test(tokens[i + 1]?.text ?? "")) digits += tokens[++i]!.text;
      out.push(bindLiteral(binds[digits], Number(digits)));
      continue;
    }
    if (t.kind === "word") {
      const before = significant(i, -1)?.text;
      const afterCast = before === ":" && tokens[i - 2]?.text === ":";
      const columnNamePosition = depth === 1 && (before === "(" || before === ",");
      if (afterCast || (isCreateTable && depth >= 1 && !columnNamePosition)) {
        const mapped = duckType(t.text, () => significant(i, 1));
        if (mapped) {
          out.push(mapped);
          continue;
        }
      }
    }
    out.push(t.text);
  }
  return out.join("");
}

/** Answers DuckDB text for one Snowflake statement; `now` replaces CURRENT_TIMESTAMP(). */
export function translate(sql: string, binds: Record<string, Bind>, nowIso: string): string {
  return rewriteTokens(sql, binds)
    .replace(/\bVECTOR\s*\(\s*(FLOAT|DOUBLE|INT|INTEGER|DECIMAL\(38,0\))\s*,\s*(\d+)\s*\)/g, (_m, kind: string, n: string) => `${kind === "FLOAT" || kind === "DOUBLE" ? "FLOAT" : "INTEGER"}[${n}]`)
    .replace(/\b(CURRENT_TIMESTAMP|SYSDATE|GETDATE)\s*\(\s*\)|\bCURRENT_TIMESTAMP\b/g, `TIMESTAMPTZ '${nowIso}'`)
    .replace(/\bSNOWFLAKE\s*\.\s*CORTEX\s*\.\s*(EMBED_TEXT_768|EMBED_TEXT_1024)\s*\(/g, "SF_$1(")
    .replace(/(?:(?:"[^"]+"|[A-Z_][A-Z0-9_$]*)\s*\.\s*)?INFORMATION_SCHEMA\s*\.\s*(COLUMNS|TABLES|SCHEMATA)\b/g, "SF_INFO_$1");
}

/** Splits a script on `;` outside strings and quoted names (the admin API's multi-statement input). */
export function splitStatements(script: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (quote) {
      if (c === "\\" && quote === "'") {
        current += c + (script[++i] ?? "");
        continue;
      }
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === ";") {
      if (current.trim()) parts.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}
