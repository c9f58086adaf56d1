// What BM25 needs of a pgvector platform table (docs/vector-tables.md#platform-tables-on-postgres),
// kept in the customer's database beside the vectors, written in the same transaction as the rows:
//   per row   `vecsync_terms jsonb` (word → count in the row) and `vecsync_length integer` (words
//             in the row), with a GIN index for `?|` (rows holding any of the query's words);
//   per table vecsync."vt_<id8>$k<g>" (term → rows holding it: BM25's n) and
//             vecsync."vt_<id8>$n<g>" (one row: the table's rows N and their total length, for avgdl).
// Words are made in TypeScript by the stores' one set of rules (store-api/words.ts, FTS5's
// unicode61 tokens), not by Postgres's text search: its stemming and stop words would give other
// words, and managed and platform tables would rank the same rows differently.
// The statistics move by deltas. A write takes a transaction-scoped advisory lock on its table's
// statistics, then reads the old words of the rows it replaces (a delete returns them), so two
// writers of one table never count the same change twice or miss one; writers of one table are
// serialized by it (the sync engine writes a table from one pass at a time anyway), searches never
// take it. Side tables are named per generation, so they keep their names through a swap's rename.
import type postgres from "postgres";
import { documentTerms } from "../store-api/index.ts";
import type { Param } from "./pgvector-rows.ts";
import { familyPrefix, LENGTH_COLUMN, qualified, quoteIdent, TERMS_COLUMN } from "./pgvector-schema.ts";

type Tx = Pick<postgres.TransactionSql, "unsafe">;

/** A row's words with their counts, and its length in words. */
export type RowTerms = { terms: Record<string, number>; length: number };

export const rowTerms = (text: string): RowTerms => documentTerms(text);

/** The statistics tables of one generation, qualified. */
export function statsTables(table: string, generation: number): { terms: string; totals: string; name: string } {
  const name = `${familyPrefix(table)}$k${generation}`;
  return { terms: qualified(name), totals: qualified(`${familyPrefix(table)}$n${generation}`), name };
}

/** The side tables and the GIN index of a generation table made with keyword columns. */
export function keywordTableStatements(table: string, generation: number): string[] {
  const s = statsTables(table, generation);
  return [
    `CREATE INDEX ${quoteIdent(`${familyPrefix(table)}$g${generation}$terms`)} ON ${qualified(table)} USING gin (${TERMS_COLUMN})`,
    `CREATE TABLE ${s.terms} (term text PRIMARY KEY, df bigint NOT NULL)`,
    `CREATE TABLE ${s.totals} (docs bigint NOT NULL, length bigint NOT NULL)`,
    `INSERT INTO ${s.totals} (docs, length) VALUES (0, 0)`,
  ];
}

/** Drops a generation's statistics tables (nothing there is fine: a table from before them). */
export function dropStatsStatements(table: string, generation: number): string[] {
  const s = statsTables(table, generation);
  return [`DROP TABLE IF EXISTS ${s.terms}`, `DROP TABLE IF EXISTS ${s.totals}`];
}

/** Taken by every write of the generation's rows, first thing after the ref's lock, held to commit. */
export async function lockStats(tx: Tx, table: string, generation: number): Promise<void> {
  await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [`vecsync:keyword:${statsTables(table, generation).name}`]);
}

/** The change a write makes to the statistics. */
export class StatsDelta {
  docs = 0;
  length = 0;
  readonly df = new Map<string, number>();

  add(row: RowTerms, sign: 1 | -1): void {
    this.docs += sign;
    this.length += sign * row.length;
    for (const term of Object.keys(row.terms)) this.df.set(term, (this.df.get(term) ?? 0) + sign);
  }

  /** Applied in one statement per table; terms no row holds any more are removed. */
  async apply(tx: Tx, table: string, generation: number): Promise<void> {
    const s = statsTables(table, generation);
    const changed = JSON.stringify(Object.fromEntries([...this.df].filter(([, d]) => d !== 0)));
    if (changed !== "{}") {
      // In term order, so two transactions (were the lock ever bypassed) take the rows' locks in one order.
      await tx.unsafe(
        `INSERT INTO ${s.terms} AS k (term, df) SELECT key, value::bigint FROM jsonb_each_text($1::text::jsonb) ORDER BY key
         ON CONFLICT (term) DO UPDATE SET df = k.df + excluded.df`,
        [changed],
      );
      await tx.unsafe(`DELETE FROM ${s.terms} WHERE df <= 0 AND term IN (SELECT jsonb_object_keys($1::text::jsonb))`, [changed]);
    }
    if (this.docs !== 0 || this.length !== 0) {
      await tx.unsafe(`UPDATE ${s.totals} SET docs = docs + $1::text::bigint, length = length + $2::text::bigint`, [String(this.docs), String(this.length)]);
    }
  }
}

/** A stored row's words as read back (`vecsync_terms::text`, `vecsync_length`). */
export function storedTerms(row: Record<string, unknown>): RowTerms {
  return { terms: JSON.parse(String(row.terms)) as Record<string, number>, length: Number(row.length) };
}

/** The row values of the two keyword columns, bound as text and cast. */
export function termParams(row: RowTerms): Param[] {
  return [JSON.stringify(row.terms), String(row.length)];
}

export const TERM_COLUMNS = [TERMS_COLUMN, LENGTH_COLUMN] as const;
export const termCasts = [(n: number) => `$${n}::text::jsonb`, (n: number) => `$${n}::text::integer`];
