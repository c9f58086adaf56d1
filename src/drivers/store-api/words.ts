// Words as the keyword index sees them (docs/vector-tables.md#query-modes), in one place for the
// two places that need them: the managed store hands texts to SQLite FTS5's `unicode61
// remove_diacritics 2` tokenizer and only picks the query's words here; a Postgres platform table
// has no FTS5, so its rows' terms are made here, and must be the tokens FTS5 makes, or managed and
// platform BM25 would part (test/drivers/platform/keyword-parity.property.test.ts). Equal to
// FTS5's on letters and digits of ASCII and Latin scripts (case folded, diacritics removed);
// other scripts follow Unicode's lowercase, which FTS5's own fold may not match letter for letter.

/** Most distinct words of a query that are searched for; a query is a search phrase, not a document. */
export const MAX_QUERY_WORDS = 64;

/** Word characters as unicode61 sees them (letters, digits, private use) plus combining marks it folds away. */
const WORD = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/** A word as the tokenizer folds it: diacritics removed ("Café" → "cafe"), lowercased. */
export function folded(word: string): string {
  return word.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/** The query's distinct words (folded → as written), the first MAX_QUERY_WORDS of them. */
export function queryWords(text: string): Map<string, string> {
  const seen = new Map<string, string>();
  for (const [word] of text.matchAll(WORD)) {
    const key = folded(word);
    if (key.length > 0 && !seen.has(key)) seen.set(key, word);
    if (seen.size >= MAX_QUERY_WORDS) break;
  }
  return seen;
}

const ASCII = /^[\x00-\x7f]*$/;

/** Calls `fn` with each word of a text as the tokenizer folds it, in order (repeats included). */
export function eachWord(text: string, fn: (word: string) => void): void {
  // Most texts are ASCII: lowercased once and cut at each character that is not [a-z0-9] (the
  // tokens WORD finds there), several times the general path's speed, which normalizes each word:
  // a backfill tokenizes every row it writes (keyword-postings.ts).
  if (ASCII.test(text)) {
    const lower = text.toLowerCase();
    let start = -1;
    for (let i = 0; i <= lower.length; i++) {
      const c = i < lower.length ? lower.charCodeAt(i) : 0;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        fn(lower.substring(start, i));
        start = -1;
      }
    }
    return;
  }
  for (const [word] of text.matchAll(WORD)) {
    const key = folded(word);
    if (key.length > 0) fn(key);
  }
}

/** A document's terms: each folded word with its count, and the text's length in words (BM25's dl). */
export function documentTerms(text: string): { terms: Record<string, number>; length: number } {
  const terms: Record<string, number> = {};
  let length = 0;
  eachWord(text, (key) => {
    terms[key] = (terms[key] ?? 0) + 1;
    length++;
  });
  return { terms, length };
}
