// Built-in models on the warehouse store: rows embedded by the warehouse from the source table
// (EMBED_TEXT_768 inside a MERGE), the text rendered in SQL exactly as render.ts renders it, the
// hashes equal to what batch sync computes from the source, queries embedded in SQL too. Driven
// the way the sync engine drives it: source hashes → metadata fetched and rendered by render.ts →
// embedFromSource.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { SourceText, WarehouseVectorStore } from "../../../src/drivers/platform/warehouse.ts";
import { keyText } from "../../../src/drivers/sources/types.ts";
import type { WarehouseSource } from "../../../src/drivers/sources/warehouse.ts";
import { embeddingColumns, embeddingTag, metadataColumns, renderMetadata, renderText, storedTextHash } from "../../../src/domains/vector-tables/render.ts";
import type { ColumnConfig } from "../../../src/domains/vector-tables/tables.ts";
import { warehouseWorld, type WarehouseWorld } from "./warehouse-world.ts";

setDefaultTimeout(30_000);

const MODEL = "snowflake-arctic-embed-m";
const COLUMNS: ColumnConfig[] = [
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "amount", role: "embedding", name_prefix: "amount=" },
  { name: "flag", role: "embedding" },
  { name: "day", role: "embedding", name_prefix: "on " },
  { name: "big", role: "embedding" },
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "price", role: "metadata", filter_type: "float" },
];
const SOURCE_DDL = "CREATE TABLE docs (id NUMBER(38,0) PRIMARY KEY, title VARCHAR, body VARCHAR, amount NUMBER(10,2), flag BOOLEAN, day DATE, big NUMBER(38,0), category VARCHAR, price FLOAT)";
/** Tricky values: NULLs, empty and blank strings (JS's \s: nbsp, U+3000, BOM…; not U+200B), a prefix on an empty value (not blank), unicode, quotes, backslashes, numbers past 2^53. */
const SOURCE_ROWS = [
  `(1, 'Hello', 'World', 12.5, TRUE, '2024-01-31', 1, 'books', 9.99)`,
  `(2, NULL, 'only body', NULL, NULL, NULL, NULL, NULL, NULL)`,
  `(3, NULL, NULL, NULL, NULL, NULL, NULL, 'games', 1.5)`,
  `(4, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL)`,
  `(5, 'naïve 😀 ｚ', 'line\u2028sep and tab\t', -0.5, FALSE, '1999-12-31', 12345678901234567890, 'tools', -2)`,
  `(6, NULL, '${"\u3000\u00a0\ufeff\u2029 \t\n\r\v\f"}', NULL, NULL, NULL, NULL, NULL, NULL)`,
  `(7, 'it''s "q" \\\\n \\\\', '', 0, NULL, NULL, -7, '', 0)`,
  `(8, ' padded ', '${"\u200b"}', 100, TRUE, NULL, 0, NULL, NULL)`,
  `(9, '', '', NULL, NULL, NULL, NULL, NULL, NULL)`,
  `(10, '  \t', NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
];

interface BuiltIn {
  world: WarehouseWorld;
  store: WarehouseVectorStore;
  source: WarehouseSource;
  ref: string;
  text: SourceText;
  tag: string;
}

async function builtIn(world: WarehouseWorld, id: string): Promise<BuiltIn> {
  await world.fake.exec(`${SOURCE_DDL}; INSERT INTO docs VALUES ${SOURCE_ROWS.join(", ")}`);
  const source = world.source();
  const table = await source.resolveTable("docs");
  const tag = embeddingTag(MODEL, 768, COLUMNS);
  const text: SourceText = { table: table.sql, pk: "ID", columns: embeddingColumns(COLUMNS).map((c) => ({ name: c.name.toUpperCase(), prefix: c.name_prefix })), tag };
  const pk = await world.store.keyColumn(table, "ID");
  const ref = world.ref(id, "docs");
  const metadata = metadataColumns(COLUMNS).map((c) => ({ name: c.name, type: c.filter_type! }));
  await world.store.ensureTable(ref, { dimensions: 768, numericPk: true, metadata, model: MODEL, primaryKey: pk });
  return { world, store: world.store, source, ref, text, tag };
}

/** One engine-like pass: source hashes → metadata rendered by render.ts → embedded by the warehouse. */
async function sync(b: BuiltIn, keys?: number[]) {
  const request = { table: "docs", pk: ["id"], textColumns: embeddingColumns(COLUMNS).map((c) => c.name), metaColumns: metadataColumns(COLUMNS).map((c) => c.name) };
  const hashes = keys ? await b.source.hashesByKeys({ ...request, keys: keys.map((k) => [k]) }) : await b.source.hashes({ ...request, afterPk: null, limit: 100 });
  const rows = await b.source.fetchByKeys({ table: "docs", pk: ["id"], columns: request.metaColumns, keys: hashes.map((h) => h.key) });
  const byPk = new Map(rows.map((r) => [keyText(r.key), r]));
  const embedRows = [...hashes.map((h) => keyText(h.key)), ...(keys ?? []).map(String)].filter((pk, i, all) => all.indexOf(pk) === i).map((pk) => {
    const h = hashes.find((x) => keyText(x.key) === pk);
    return { pk, metaHash: h?.metaHash ?? "", metadata: byPk.has(pk) ? renderMetadata(COLUMNS, byPk.get(pk)!.values) : {} };
  });
  return { hashes, result: await b.store.embedFromSource(b.ref, b.text, embedRows) };
}

describe("happy", () => {
  test("the warehouse renders each row's text exactly as render.ts does, and stores the hashes batch sync computes", async () => {
    await using world = await warehouseWorld();
    const b = await builtIn(world, "render01");
    const { hashes, result } = await sync(b);
    const all = await b.source.fetchByKeys({ table: "docs", pk: ["id"], columns: COLUMNS.map((c) => c.name), keys: hashes.map((h) => h.key) });
    const expected = new Map(all.map((r) => [keyText(r.key), renderText(COLUMNS, r.values)]));
    expect(expected.get("5")).toBe("Title: naïve 😀 ｚ\nline\u2028sep and tab\t\namount=-0.50\nfalse\non 1999-12-31\n12345678901234567890");
    expect(expected.get("3")).toBeNull();
    const blank = [...expected].filter(([, t]) => t === null).map(([pk]) => pk);
    expect(blank).toEqual(["3", "4", "6"]);
    expect(result.embedded).toEqual([...expected.keys()].filter((pk) => !blank.includes(pk)));
    expect(result.missing).toEqual([]);
    const textHash = (pk: string) => storedTextHash(hashes.find((h) => keyText(h.key) === pk)!.textHash, b.tag);
    expect(result.empty).toEqual(blank.map((pk) => ({ pk, textHash: textHash(pk) })));

    const docs = await b.store.docs(b.ref, [...expected.keys()]);
    expect([...docs.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(result.embedded);
    for (const pk of result.embedded) expect(docs.get(pk)!.text).toBe(expected.get(pk)!);
    const stored = await b.store.hashes(b.ref, { pks: result.embedded });
    expect(stored).toEqual(result.embedded.map((pk) => ({ pk, textHash: textHash(pk), metaHash: hashes.find((h) => keyText(h.key) === pk)!.metaHash })));
    // Metadata as the service rendered it (render.ts), typed and filterable.
    expect(await b.store.count(b.ref, { category: "tools", price: { lt: 0 } })).toBe(1);
    expect(await b.store.count(b.ref, { category: "" })).toBe(1);
  });

  test("the text never crosses the wire: only keys, metadata and hashes do", async () => {
    await using world = await warehouseWorld();
    const b = await builtIn(world, "wire0001");
    const before = world.fake.requests.length;
    await b.store.embedFromSource(b.ref, b.text, [{ pk: "1", metaHash: "m", metadata: { category: "books", price: 9.99 } }]);
    const sent = JSON.stringify(world.fake.requests.slice(before).map((r) => r.body));
    expect(sent).not.toContain("Hello");
    expect(sent).toContain("SNOWFLAKE.CORTEX.EMBED_TEXT_768('snowflake-arctic-embed-m', s.\\\"TX\\\")");
  });

  test("vectors are the warehouse's embedding of the stored text; a text query is embedded in SQL with the generation's model", async () => {
    await using world = await warehouseWorld();
    const b = await builtIn(world, "query001");
    await sync(b);
    const docs = await b.store.docs(b.ref, ["1", "5"]);
    for (const [pk, doc] of docs) {
      const { hits } = await b.store.searchText(b.ref, { text: doc.text, k: 1 });
      expect(hits[0]).toMatchObject({ pk, text: doc.text });
      expect(hits[0]!.score).toBeCloseTo(1, 5);
      // The same ranking as searching with the stored vector itself.
      const byVector = await b.store.search(b.ref, { vector: doc.vector, k: 3 });
      expect((await b.store.searchText(b.ref, { text: doc.text, k: 3 })).hits.map((h) => h.pk)).toEqual(byVector.hits.map((h) => h.pk));
    }
    const filtered = await b.store.searchText(b.ref, { text: "Hello", k: 5, filter: { category: "tools" } });
    expect(filtered.hits.map((h) => h.pk)).toEqual(["5"]);
    expect(filtered.path).toBe("exact");
  });

  test("changed, emptied and deleted source rows: re-embedded, removed, reported", async () => {
    await using world = await warehouseWorld();
    const b = await builtIn(world, "change01");
    await sync(b);
    await world.fake.exec("UPDATE docs SET title = 'Goodbye' WHERE id = 1; UPDATE docs SET title = NULL, body = ' ' WHERE id = 2; DELETE FROM docs WHERE id = 5; UPDATE docs SET title = 'now text' WHERE id = 3");
    const { result, hashes } = await sync(b, [1, 2, 3, 5]);
    expect(result).toEqual({ embedded: ["1", "3"], empty: [{ pk: "2", textHash: storedTextHash(hashes.find((h) => h.key[0] === 2)!.textHash, b.tag) }], missing: ["5"] });
    const docs = await b.store.docs(b.ref, ["1", "2", "3", "5"]);
    expect([...docs.keys()].sort()).toEqual(["1", "3"]);
    expect(docs.get("1")!.text).toBe("Title: Goodbye\nWorld\namount=12.50\ntrue\non 2024-01-31\n1");
    expect(docs.get("3")!.text).toBe("Title: now text");
    // Idempotent: the same rows again change nothing.
    const again = await sync(b, [1, 3]);
    expect(again.result.embedded).toEqual(["1", "3"]);
    expect(await b.store.count(b.ref)).toBe(6);
  });
});

describe("errors", () => {
  test("a table whose generation cannot be embedded in SQL is refused before any write", async () => {
    await using world = await warehouseWorld();
    const ref = world.ref("dims0001", "x");
    await world.store.ensureTable(ref, { dimensions: 16, numericPk: true, metadata: [], model: MODEL });
    const text: SourceText = { table: '"PUBLIC"."NOPE"', pk: "ID", columns: [{ name: "T" }], tag: "t" };
    await expect(world.store.embedFromSource(ref, text, [{ pk: "1", metaHash: "m", metadata: {} }])).rejects.toThrow(/768 or 1024 dimensions/);
    const ref2 = world.ref("nomodel1", "x");
    await world.store.ensureTable(ref2, { dimensions: 768, numericPk: true, metadata: [] });
    await expect(world.store.searchText(ref2, { text: "q", k: 1 })).rejects.toThrow(/no built-in model/);
  });
});
