// comparePk must agree with the source's own `ORDER BY pk`: a throwaway Postgres database (our
// databases are C.UTF-8) holds the keys, and sorting them with comparePk gives the same order.
import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../../src/shared/prng.ts";
import { compareCodePoints, comparePk } from "../../../src/drivers/store-api/index.ts";
import { throwawayPostgres } from "../../harness.ts";

/**
 * ASCII, Latin-1 and CJK, the top of the BMP (E000–FFFF: private use, full-width forms, U+FFFD),
 * and astral characters (surrogate pairs in UTF-16), alone and after a common prefix: UTF-16
 * order puts "\u{1F600}" before "\uFF21", code point order after.
 */
const TEXT_KEYS = [
  "", "a", "A", "b", "B", "aa", "a b", "10", "9", "~", "\u007f", "ä", "é", "ÿ", "Ā", "中", "\uD7FB",
  "\uE000", "\uFB01", "\uFEFF", "\uFF21", "\uFF5A", "\uFFFD", "\u{10000}", "\u{1D11E}", "\u{1F600}", "\u{1F601}", "\u{10FFFF}",
  "a\u{1F600}", "a\uFF21", "a\uFFFD", "\u{1F600}a", "\uFF21\u{1F600}", "x\u{1F600}y", "x\uFFFDy", "x\uFF21", "x\u{1F600}",
];

function shuffled<T>(items: T[], seed: number): T[] {
  const rand = mulberry32(seed);
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("happy", () => {
  test("text keys sort as the source's ORDER BY pk, astral characters included", async () => {
    await using db = await throwawayPostgres();
    await db.sql.unsafe("CREATE TABLE keys (pk text PRIMARY KEY)");
    await db.sql.unsafe("INSERT INTO keys SELECT unnest($1::text[])", [TEXT_KEYS as never]);
    const source = (await db.sql.unsafe("SELECT pk FROM keys ORDER BY pk")).map((r) => String(r.pk));
    expect(source).toHaveLength(TEXT_KEYS.length);
    for (const seed of [1, 2, 3]) expect(shuffled(TEXT_KEYS, seed).sort(comparePk(false))).toEqual(source);
    // Among numeric keys, a pair that is not two numbers falls back to the same order.
    expect(compareCodePoints("\u{1F600}", "\uFF21")).toBe(1);
    expect(comparePk(true)("\u{1F600}", "\uFF21")).toBe(1);
  });

  test("numeric keys sort as the source's ORDER BY pk, past 2^53 too", async () => {
    await using db = await throwawayPostgres();
    await db.sql.unsafe("CREATE TABLE keys (pk numeric PRIMARY KEY)");
    const keys = ["-12345678901234567890", "-100", "-1", "-0.5", "0", "0.25", "2.5", "3", "9", "10", "100", "999999999999999", "1000000000000000", "9007199254740992", "9007199254740993", "12345678901234567890"];
    await db.sql.unsafe("INSERT INTO keys SELECT unnest($1::text[])::numeric", [keys as never]);
    const source = (await db.sql.unsafe("SELECT pk::text AS key FROM keys ORDER BY pk")).map((r) => String(r.key));
    expect(shuffled(source, 7).sort(comparePk(true))).toEqual(source);
  });
});
