// Primary-key order for ties in score (docs/vector-tables.md#query), shared by the managed store and the platform
// stores so both break ties alike. The source's own order wins: sources are read `ORDER BY pk`,
// and our Postgres databases use the C.UTF-8 collation (and the pgvector tables `COLLATE "C"`),
// which is code point order, the same as UTF-8 byte order and SQLite's BINARY. JS's `a < b`
// compares UTF-16 code units instead and disagrees on astral characters: "\u{1F600}" is the
// surrogate pair D83D DE00, which sorts before "\uFF21", whose code point is smaller.
// Numeric keys order numerically, as BigInt when integral so keys past 2^53 still order right.
const INTEGER = /^-?\d+$/;
/** Integer strings this short (sign included) are below 10^15 < 2^53: exact as a Number, no BigInt needed. */
const SAFE_INTEGER_CHARS = 15;

export type PkOrder = (a: string, b: string) => number;

/**
 * Code point order without encoding: the first differing UTF-16 unit decides, as `<` would,
 * except where surrogates (D800–DFFF, the halves of U+10000 and above) meet E000–FFFF, which
 * they must sort above. Moving surrogates up by 0x2000 and E000–FFFF down by 0x800 does that
 * (ICU's code point fix-up). As fast as `<` on ASCII keys; Buffer.compare was ~12× slower here
 * for the two encodings it allocates per comparison.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/**
 * A numeric key's value when comparePk(true) compares it as a plain Number (an integer of at most
 * SAFE_INTEGER_CHARS characters), else NaN. Two such values compare as comparePk(true) compares
 * their keys: a caller comparing the same keys many times parses each once.
 */
export function smallIntegerKey(pk: string): number {
  return pk.length <= SAFE_INTEGER_CHARS && INTEGER.test(pk) ? Number(pk) : NaN;
}

/** Numerically for numeric keys (BigInt when integral), else by code point; non-numbers among numeric keys by code point too. */
export function comparePk(numeric: boolean): PkOrder {
  if (!numeric) return compareCodePoints;
  return (a, b) => {
    const small = smallIntegerKey(a) - smallIntegerKey(b); // NaN unless both are small integers
    if (!Number.isNaN(small)) return small < 0 ? -1 : small > 0 ? 1 : 0;
    if (INTEGER.test(a) && INTEGER.test(b)) {
      const x = BigInt(a);
      const y = BigInt(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const diff = Number(a) - Number(b);
    return diff !== 0 && !Number.isNaN(diff) ? Math.sign(diff) : compareCodePoints(a, b);
  };
}
