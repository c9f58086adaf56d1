// Built-in models: the warehouse renders each row's text from the source table and embeds it
// with EMBED_TEXT_768 inside one MERGE, so the text never leaves the warehouse.
//
// The text is rendered in SQL exactly as render.ts renders it (docs/vector-tables.md#text-and-metadata):
// embedding columns in embedding order, each non-null one as `name_prefix + value`, joined by
// "\n"; only blanks (JS's \s) is no text. Each part is `"\n" || prefix || TO_VARCHAR(col)` (NULL
// when the value is), the parts are concatenated with NULLs as '', and the first "\n" is cut. The
// value's text is the warehouse's TO_VARCHAR, which is what the source driver reads for TEXT,
// NUMBER, BOOLEAN and DATE columns (a test checks); FLOAT and timestamp columns print in the
// warehouse's own format, which can differ from JS's (docs/platform-warehouse.md).
//
// The text hash is the source driver's own formula over the same columns (hashExpression) bound to
// the tag like storedTextHash, so batch sync diffs these rows as it diffs any other.
// Metadata is NOT rendered here: the service renders it (render.ts renderMetadata) and passes it
// in, so its typing can never differ from the other paths; metadata values may leave the warehouse.
import { hashExpression, quoteIdent } from "../sources/warehouse-sql.ts";
import type { Metadata } from "../store-api/index.ts";
import type { Bind } from "./warehouse-filters.ts";
import { mergeSql, readKey, rowSets, valuesSelect } from "./warehouse-rows.ts";
import { layoutOf, type WarehouseSpec } from "./warehouse-schema.ts";
import { embedCall, type Run } from "./warehouse-search.ts";

/** Where a table's text comes from. Names are the catalog's spelling (WarehouseSource.resolveTable). */
export interface SourceText {
  /** The source table's SQL reference as the source driver resolved it, e.g. `"PUBLIC"."ITEMS"` (same database). */
  table: string;
  /** The source's key column. */
  pk: string;
  /** Embedding columns in embedding order (render.ts embeddingColumns), each with its name_prefix. */
  columns: { name: string; prefix?: string | null }[];
  /** render.ts embeddingTag(…): the stored text hash is `<source text hash>.<tag>` (storedTextHash). */
  tag: string;
}

/** A row to embed from the source: its key, and its metadata as the service rendered it. */
export interface EmbedRow {
  pk: string;
  metaHash: string;
  metadata: Metadata;
}

export interface EmbedResult {
  /** Rows written with a new text and vector. */
  embedded: string[];
  /** Rows whose rendered text is blank: not stored (a stored one was deleted), with their text hash. */
  empty: { pk: string; textHash: string }[];
  /** Rows the source no longer has: deleted from the table. */
  missing: string[];
}

/** ECMAScript WhiteSpace and LineTerminator: what `\s` matches, so what render.ts calls blank. */
const JS_BLANKS = String.fromCodePoint(0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff);

/**
 * `SELECT "K", "TH", "TX"` for the given keys: the key as the vector table's key type, the stored
 * text hash, and the rendered text (NULL when blank). Binds are appended in textual order.
 */
export function sourceTextSelect(source: SourceText, keyType: string, keys: string[], binds: Bind[]): string {
  binds.push(JS_BLANKS);
  const outer = `SELECT "K", "TH", IFF(TRANSLATE("RAW", ?, '') = '', NULL, "RAW") AS "TX"`;
  binds.push(source.tag);
  const hash = `${hashExpression(source.columns.map((c) => c.name))} || '.' || ?`;
  const parts = source.columns.map((c) => {
    binds.push(c.prefix ?? "");
    return `COALESCE(CHR(10) || ? || TO_VARCHAR(${quoteIdent(c.name)}), '')`;
  });
  const raw = parts.length === 0 ? "''" : `SUBSTR(${parts.join(" || ")}, 2)`;
  binds.push(...keys);
  const where = `${quoteIdent(source.pk)} IN (${keys.map(() => "?").join(", ")})`;
  return `${outer} FROM (SELECT ${quoteIdent(source.pk)}::${keyType} AS "K", ${hash} AS "TH", ${raw} AS "RAW" FROM ${source.table} WHERE ${where})`;
}

/**
 * One MERGE: the given rows (key, metadata hash, metadata) joined with their rendered source text;
 * a blank or vanished text deletes the stored row, any other is written with its embedding.
 */
export function embedMergeSql(table: string, spec: WarehouseSpec, source: SourceText, rows: EmbedRow[]): { sql: string; binds: Bind[] } {
  const values = valuesSelect(spec, rows.map((r) => ({ pk: r.pk, metadata: r.metadata, extra: [r.metaHash] })), ["MH"]);
  const binds: Bind[] = [...values.binds];
  const text = sourceTextSelect(source, layoutOf(spec).pkType, rows.map((r) => r.pk), binds);
  const meta = spec.metadata.map((_, i) => `, m."M${i}" AS "M${i}"`).join("");
  const using = `SELECT m."K", m."MH", r."TH", r."TX"${meta} FROM (${values.sql}) m LEFT JOIN (${text}) r ON r."K" = m."K"`;
  const sql = mergeSql(table, spec, using, rowSets(spec, embedCall(spec, 's."TX"')), { insert: true, deleteWhen: 's."TX" IS NULL', insertWhen: 's."TX" IS NOT NULL' });
  return { sql, binds };
}

/**
 * Embeds one chunk of rows and tells which were written, blank or gone. What is blank is read
 * just before the MERGE (the warehouse has no statement that writes and reports per row); a row
 * changed in between is reported by the state it had, and the next pass sees its real hash.
 */
export async function embedChunk(run: Run, table: string, spec: WarehouseSpec, source: SourceText, rows: EmbedRow[], out: EmbedResult): Promise<void> {
  const merge = embedMergeSql(table, spec, source, rows); // checks the rows and the model before any SQL
  const binds: Bind[] = [];
  const report = await run(sourceTextSelect(source, layoutOf(spec).pkType, rows.map((r) => r.pk), binds), binds, "read source text");
  const found = new Map(report.rows.map((r) => [readKey(report, r), { textHash: String(r[1]), blank: r[2] === null }]));
  for (const { pk } of rows) {
    const f = found.get(pk);
    if (!f) out.missing.push(pk);
    else if (f.blank) out.empty.push({ pk, textHash: f.textHash });
    else out.embedded.push(pk);
  }
  await run(merge.sql, merge.binds, "embed");
}
