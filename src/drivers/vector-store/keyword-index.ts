// The keyword index of a generation (docs/vector-tables.md#query-modes): an SQLite FTS5 table over
// the rows' embedded texts, rowid = rid. It is an external-content table reading `docs.text`, so
// the text is stored once; FTS5 then needs each removed text given back to it ('delete' with the
// old text), which rows.ts does in the same transaction that changes `docs`, before the change.
// So the index is exactly the committed `docs`: a restart, a kill -9 or a swap cannot part them.
//
// Tokenizer (schema.ts keywordIndexDdl): unicode61 with remove_diacritics 2 (letters and digits of
// any script, case folded, diacritics removed from every Latin letter: "Café" matches "cafe"). FTS5's bm25() is Okapi BM25
// with k1 = 1.2, b = 0.75 and returns the score negated (smaller is better), so a keyword score
// is -bm25(). Its IDF is ln((N − n + 0.5) / (n + 0.5)), floored at 1e-6 for words in half the rows or more.
import type { Client, InStatement, InValue } from "@libsql/client";
import { bareIdent, generationTables, type GenerationTables, keywordIndexDdl } from "./schema.ts";
import { queryWords } from "../store-api/index.ts";


/** Takes the current texts of the rows matching `ridsSql` out of the index: run before `docs` changes. */
export function unindexStatement(t: GenerationTables, ridsSql: string, args: InValue[]): InStatement {
  return { sql: `INSERT INTO ${t.words} (${t.words}, rowid, text) SELECT 'delete', rid, text FROM ${t.docs} WHERE rid IN (${ridsSql})`, args };
}

/** Puts the current texts of the rows matching `ridsSql` into the index: run after `docs` changed. */
export function indexStatement(t: GenerationTables, ridsSql: string, args: InValue[]): InStatement {
  return { sql: `INSERT INTO ${t.words} (rowid, text) SELECT rid, text FROM ${t.docs} WHERE rid IN (${ridsSql})`, args };
}

/**
 * A generation made before the keyword index existed gets it when opened: built from the stored
 * texts in one transaction with its creation, so a crash leaves either no index (built again at
 * the next start) or a whole one. Returns whether it had to be built.
 */
export async function ensureKeywordIndex(client: Client, collection: string, generation: number): Promise<boolean> {
  const t = generationTables(collection, generation);
  const rs = await client.execute({ sql: "SELECT 1 FROM sqlite_master WHERE name = ?", args: [bareIdent(t.words)] });
  if (rs.rows.length > 0) return false;
  await client.batch([keywordIndexDdl(t), `INSERT INTO ${t.words} (${t.words}) VALUES ('rebuild')`], "write");
  return true;
}

/**
 * The FTS5 MATCH expression for a query text: each distinct word as a quoted string, OR'ed. Only
 * word characters (words.ts) reach MATCH, inside quotes, so nothing of FTS5's query syntax (NEAR, column
 * filters, `*`, `^`, AND/NOT) can come from the user. Null when the text has no word: an empty
 * keyword answer, not an error.
 */
export function matchExpression(text: string): string | null {
  return keywordQuery(text).match;
}

/** A query text's words: folded (as the in-memory ranking looks them up) and as FTS5's MATCH expression. */
export interface KeywordQuery {
  words: string[];
  match: string | null;
}

export function keywordQuery(text: string): KeywordQuery {
  const seen = queryWords(text);
  const match = seen.size === 0 ? null : [...seen.values()].map((w) => `"${w}"`).join(" OR ");
  return { words: [...seen.keys()], match };
}
