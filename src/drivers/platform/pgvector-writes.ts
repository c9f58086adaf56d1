// The row writes of a pgvector platform table as multi-row statements: every value bound as text
// and cast in SQL (pgvector-rows.ts), every row validated before any statement is made; on a
// table with keyword columns, its term statistics moved in the same transaction (pgvector-keyword.ts).
import type { GenerationSpec, MetadataUpdate, UpsertRow } from "../store-api/index.ts";
import { PG_CAST } from "./filters-pg.ts";
import type postgres from "postgres";
import { lockStats, rowTerms, type RowTerms, StatsDelta, storedTerms, TERM_COLUMNS, termCasts, termParams } from "./pgvector-keyword.ts";
import { assertText, lastPerKey, metadataParams, rowsPerStatement, vectorText, type Param } from "./pgvector-rows.ts";
import { LENGTH_COLUMN, layoutOf, META_HASH_COLUMN, qualified, type TableComment, TERMS_COLUMN, TEXT_COLUMN, TEXT_HASH_COLUMN, VECTOR_COLUMN } from "./pgvector-schema.ts";
import type { PlatformTableSpec } from "./types.ts";

export type Statement = { sql: string; params: Param[] };

/** Casts of one row's values, `$n` → the column's type. */
type Cast = (n: number) => string;

/** `VALUES` tuples of at most `rowsPerStatement` rows each, placeholders numbered per statement. */
function tuples(values: Param[][], casts: Cast[]): { tuples: string; params: Param[] }[] {
  const out: { tuples: string; params: Param[] }[] = [];
  const per = rowsPerStatement(casts.length);
  for (let start = 0; start < values.length; start += per) {
    const params: Param[] = [];
    const rows = values.slice(start, start + per).map((row) => `(${row.map((v, i) => (params.push(v), casts[i]!(params.length))).join(", ")})`);
    out.push({ tuples: rows.join(", "), params });
  }
  return out;
}

const metaCasts = (spec: GenerationSpec): Cast[] => spec.metadata.map((c) => (n: number) => `$${n}::text::${PG_CAST[c.type]}`);

/**
 * Inserts or replaces rows by key (the last row wins for a repeated key). `terms`: each row's words,
 * by key, for a table with keyword columns (pgvector-keyword.ts); null for one from before them.
 */
export function upsertStatements(table: string, spec: PlatformTableSpec, rows: UpsertRow[], terms: Map<string, RowTerms> | null = null): Statement[] {
  const layout = layoutOf(spec);
  const columns = [layout.pk, TEXT_COLUMN, ...spec.metadata.map((_, i) => layout.meta(i)), VECTOR_COLUMN, TEXT_HASH_COLUMN, META_HASH_COLUMN, ...(terms ? TERM_COLUMNS : [])];
  const text: Cast = (n) => `$${n}::text`;
  const casts: Cast[] = [layout.pkParam, text, ...metaCasts(spec), layout.vectorParam, text, text, ...(terms ? termCasts : [])];
  const updates = columns.slice(1).map((c) => `${c} = excluded.${c}`).join(", ");
  const values = lastPerKey(rows).map((r) => [
    r.pk,
    assertText(r.text, "text", r.pk),
    ...metadataParams(spec, r.metadata, r.pk),
    vectorText(r.vector, spec.dimensions, r.pk),
    r.textHash,
    r.metaHash,
    ...(terms ? termParams(terms.get(r.pk)!) : []),
  ]);
  return tuples(values, casts).map((t) => ({
    sql: `INSERT INTO ${qualified(table)} (${columns.join(", ")}) VALUES ${t.tuples} ON CONFLICT (${layout.pk}) DO UPDATE SET ${updates}`,
    params: t.params,
  }));
}

/** Metadata and its hash by key, never text or vector; each statement returns a row per row updated. */
export function updateMetadataStatements(table: string, spec: PlatformTableSpec, updates: MetadataUpdate[]): Statement[] {
  const layout = layoutOf(spec);
  const casts: Cast[] = [layout.pkParam, (n) => `$${n}::text`, ...metaCasts(spec)];
  const values = lastPerKey(updates).map((u) => [u.pk, u.metaHash, ...metadataParams(spec, u.metadata, u.pk)]);
  const aliases = spec.metadata.map((_, i) => `m${i}`);
  const sets = [`${META_HASH_COLUMN} = u.meta_hash`, ...aliases.map((a, i) => `${layout.meta(i)} = u.${a}`)].join(", ");
  return tuples(values, casts).map((t) => ({
    sql: `UPDATE ${qualified(table)} AS t SET ${sets} FROM (VALUES ${t.tuples}) AS u (key, meta_hash${aliases.map((a) => `, ${a}`).join("")}) WHERE t.${layout.pk} = u.key RETURNING 1`,
    params: t.params,
  }));
}

type Tx = Pick<postgres.TransactionSql, "unsafe">;

/**
 * Upserts rows in the caller's transaction; on a table with keyword columns, the term statistics
 * move with them (pgvector-keyword.ts): the words of the rows replaced out, the new rows' in.
 */
export async function writeRows(tx: Tx, table: string, comment: TableComment, rows: UpsertRow[]): Promise<void> {
  if (!comment.keyword) {
    for (const statement of upsertStatements(table, comment.spec, rows)) await tx.unsafe(statement.sql, statement.params);
    return;
  }
  await lockStats(tx, table, comment.generation);
  const latest = lastPerKey(rows);
  const delta = new StatsDelta();
  const { pk, pkList } = layoutOf(comment.spec);
  const old = await tx.unsafe(`SELECT ${TERMS_COLUMN}::text AS terms, ${LENGTH_COLUMN} AS length FROM ${qualified(table)} WHERE ${pk} IN (${pkList(1)})`, [JSON.stringify(latest.map((r) => r.pk))]);
  for (const row of old) delta.add(storedTerms(row), -1);
  const terms = new Map(latest.map((r) => [r.pk, rowTerms(r.text)]));
  for (const t of terms.values()) delta.add(t, 1);
  for (const statement of upsertStatements(table, comment.spec, latest, terms)) await tx.unsafe(statement.sql, statement.params);
  await delta.apply(tx, table, comment.generation);
}

/** Deletes rows by key in the caller's transaction, the statistics with them; returns how many existed. */
export async function deleteRows(tx: Tx, table: string, comment: TableComment, pks: string[]): Promise<number> {
  const { pk, pkList } = layoutOf(comment.spec);
  const from = `DELETE FROM ${qualified(table)} WHERE ${pk} IN (${pkList(1)})`;
  if (!comment.keyword) return (await tx.unsafe(`${from} RETURNING 1`, [JSON.stringify(pks)])).length;
  await lockStats(tx, table, comment.generation);
  const gone = await tx.unsafe(`${from} RETURNING ${TERMS_COLUMN}::text AS terms, ${LENGTH_COLUMN} AS length`, [JSON.stringify(pks)]);
  const delta = new StatsDelta();
  for (const row of gone) delta.add(storedTerms(row), -1);
  await delta.apply(tx, table, comment.generation);
  return gone.length;
}
