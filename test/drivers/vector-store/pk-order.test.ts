// Ties in score come in the source's primary-key order (docs/vector-tables.md#query): the same text keys in a
// throwaway Postgres table (C.UTF-8, as our databases are) read `ORDER BY pk`, and in the managed
// store with one vector for all, searched on every path that orders hits.
import { describe, expect, test } from "bun:test";
import { throwawayPostgres } from "../../harness.ts";
import { clusteredVectors, makeWorld, pks, SPEC } from "./helpers.ts";

/** ASCII, the top of the BMP (E000–FFFF) and astral characters, where UTF-16 and code point order part. */
const KEYS = ["a", "B", "10", "9", "ä", "中", "\uE000", "\uFF21", "\uFF5A", "\uFFFD", "\u{10000}", "\u{1F600}", "\u{1F601}", "a\u{1F600}", "a\uFF21", "\u{1F600}a", "\uFF21\u{1F600}"];

async function sourceOrder(keys: string[]): Promise<string[]> {
  await using db = await throwawayPostgres();
  await db.sql.unsafe("CREATE TABLE items (pk text PRIMARY KEY)");
  await db.sql.unsafe("INSERT INTO items SELECT unnest($1::text[])", [keys as never]);
  return (await db.sql.unsafe("SELECT pk FROM items ORDER BY pk")).map((r) => String(r.pk));
}

describe("happy", () => {
  test("equal scores among text keys come in the source's ORDER BY pk, astral characters included", async () => {
    const source = await sourceOrder(KEYS);
    await using w = await makeWorld();
    const store = await w.open();
    const spec = { ...SPEC, numericPk: false, metadata: [] };
    await store.createCollection("vt_a", spec);
    const [same] = clusteredVectors(1, spec.dimensions, 5);
    await store.upsert("vt_a", KEYS.map((pk) => ({ pk, textHash: "t", metaHash: "m", text: pk, metadata: {}, vector: same! })));

    const memory = await store.search("vt_a", { vector: same!, k: KEYS.length });
    expect(memory.path).toBe("exact-memory");
    expect(pks(memory.hits)).toEqual(source);
    // Cut inside the tie group: the first keys in source order win.
    expect(pks((await store.search("vt_a", { vector: same!, k: 5 })).hits)).toEqual(source.slice(0, 5));
    // The store's own pk order (hash pages for diffing) is the same order.
    expect((await store.hashes("vt_a", { limit: KEYS.length })).map((h) => h.pk)).toEqual(source);

    await store.close();
    const reopened = await w.open();
    const sql = await reopened.search("vt_a", { vector: same!, k: KEYS.length });
    expect(sql.path).toBe("exact-sql"); // the mirror is still loading
    expect(pks(sql.hits)).toEqual(source);
  });
});
