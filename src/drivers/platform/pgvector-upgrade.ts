// A pgvector platform table made before keyword search gets its keyword columns and statistics
// (pgvector-keyword.ts) at its next settle, i.e. after the next sync pass or backfill
// (docs/vector-tables.md#platform-tables-on-postgres): the words of every stored text made here
// (they are made in TypeScript, store-api/words.ts, so no SQL alone can fill them), then the
// statistics counted from them. One transaction under the ref's exclusive lock: a crash leaves
// the table as it was (upgraded again next time), and no write meets it half done. Searches wait
// on the ALTER TABLE's lock until it commits, once (its time is not measured yet).
import type postgres from "postgres";
import { resolve, type WithFamily } from "./pgvector-family.ts";
import { rowTerms, statsTables, dropStatsStatements, keywordTableStatements } from "./pgvector-keyword.ts";
import { LENGTH_COLUMN, layoutOf, primaryKeyOf, qualified, quoteLiteral, type TableComment, TERMS_COLUMN, TEXT_COLUMN } from "./pgvector-schema.ts";

type Tx = Pick<postgres.TransactionSql, "unsafe">;

/** Rows read and written back per statement while the words are made. */
const PAGE_ROWS = 2000;

/** Upgrades the ref's live table if it is from before keyword search; whether it did. */
export async function upgradeIfOld(ref: string, withFamily: WithFamily): Promise<boolean> {
  if (await withFamily(ref, "shared", async (_tx, family) => resolve(family, ref, {}).comment.keyword === true)) return false;
  return withFamily(ref, "exclusive", async (tx, family) => {
    const { table, comment } = resolve(family, ref, {});
    if (comment.keyword) return false;
    await addKeywordColumns(tx, table, comment);
    return true;
  });
}

export async function addKeywordColumns(tx: Tx, table: string, comment: TableComment): Promise<void> {
  const t = qualified(table);
  const { pk } = layoutOf(comment.spec);
  const pkType = primaryKeyOf(comment.spec).type;
  await tx.unsafe(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${TERMS_COLUMN} jsonb, ADD COLUMN IF NOT EXISTS ${LENGTH_COLUMN} integer`);
  for (;;) {
    const rows = await tx.unsafe(`SELECT ${pk}::text AS key, ${TEXT_COLUMN} AS text FROM ${t} WHERE ${TERMS_COLUMN} IS NULL LIMIT ${PAGE_ROWS}`);
    if (rows.length === 0) break;
    const values = rows.map((r) => {
      const { terms, length } = rowTerms(String(r.text));
      return { key: String(r.key), terms, length };
    });
    await tx.unsafe(
      `UPDATE ${t} SET ${TERMS_COLUMN} = u.terms, ${LENGTH_COLUMN} = u.length
       FROM jsonb_to_recordset($1::text::jsonb) AS u(key text, terms jsonb, length integer) WHERE ${t}.${pk} = u.key::${pkType}`,
      [JSON.stringify(values)],
    );
    if (rows.length < PAGE_ROWS) break;
  }
  await tx.unsafe(`ALTER TABLE ${t} ALTER COLUMN ${TERMS_COLUMN} SET NOT NULL, ALTER COLUMN ${LENGTH_COLUMN} SET NOT NULL`);
  for (const statement of [...dropStatsStatements(table, comment.generation), ...keywordTableStatements(table, comment.generation)]) await tx.unsafe(statement);
  const s = statsTables(table, comment.generation);
  await tx.unsafe(`INSERT INTO ${s.terms} (term, df) SELECT w, count(*) FROM ${t}, jsonb_object_keys(${TERMS_COLUMN}) AS w GROUP BY w`);
  await tx.unsafe(`UPDATE ${s.totals} SET docs = (SELECT count(*) FROM ${t}), length = (SELECT coalesce(sum(${LENGTH_COLUMN}), 0) FROM ${t})`);
  await tx.unsafe(`COMMENT ON TABLE ${t} IS ${quoteLiteral(JSON.stringify({ ...comment, keyword: true }))}`);
}
