import { describe, expect, test } from "bun:test";
import { collectionName, embeddingTag, renderMetadata, renderText } from "../../../src/domains/vector-tables/render.ts";
import type { ColumnConfig } from "../../../src/domains/vector-tables/tables.ts";

const columns: ColumnConfig[] = [
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "notes", role: "embedding" },
  { name: "price", role: "metadata", filter_type: "float" },
  { name: "stock", role: "metadata", filter_type: "integer" },
  { name: "live", role: "metadata", filter_type: "boolean" },
  { name: "sku", role: "metadata", filter_type: "keyword" },
];

describe("happy", () => {
  test("embedding columns by ordinal then position, prefixed, joined by newlines, nulls skipped", () => {
    expect(renderText(columns, { title: "Lamp", body: "Brass", notes: "old" })).toBe("Title: Lamp\nBrass\nold");
    expect(renderText(columns, { title: null, body: "Brass", notes: null })).toBe("Brass");
    expect(renderText(columns, { title: "", body: 3, notes: true })).toBe("Title: \n3\ntrue");
  });

  test("a row whose embedding columns are all null renders no text", () => {
    expect(renderText(columns, { title: null, body: null, notes: null })).toBeNull();
  });

  test("metadata is typed by filter_type, and values that do not fit are null", () => {
    expect(renderMetadata(columns, { price: "12.50", stock: 3, live: "t", sku: 42 })).toEqual({ price: 12.5, stock: 3, live: true, sku: "42" });
    expect(renderMetadata(columns, { price: null, stock: "9007199254740993", live: "maybe" })).toEqual({ price: null, stock: null, live: null, sku: null });
  });

  test("the embedding tag changes with the model, the dimensions and the rendering rules only", () => {
    const base = embeddingTag("m", 512, columns);
    expect(embeddingTag("m", 512, [...columns])).toBe(base);
    expect(embeddingTag("m2", 512, columns)).not.toBe(base);
    expect(embeddingTag("m", 256, columns)).not.toBe(base);
    expect(embeddingTag("m", 512, columns.map((c) => (c.name === "title" ? { ...c, name_prefix: "T: " } : c)))).not.toBe(base);
    expect(embeddingTag("m", 512, columns.map((c) => (c.name === "price" ? { ...c, filter_type: "integer" as const } : c)))).toBe(base);
  });

  test("collection names follow docs/vector-tables.md#vector-tables", () => {
    expect(collectionName("abcdefgh12345678", "My Products-2024!")).toBe("vt_abcdefgh_my_products_2024_");
  });
});
