// The seeded source of the end-to-end tests: ~300 rows of word soup with metadata of every
// filter type, NULLs in every column, rows with no text at all, and identical texts at ids 3, 20,
// 100 and 250 (a tie the service must break by primary key numerically: "100" < "20" as text).
// Also the probes: queries covering every filter operator, `$or`, shorthand, min score, limit.
import type { Column, Config, Probe, Row } from "./helpers.ts";

const WORDS = ("vector search engine index postgres replication slot embedding model token cooking pasta garden " +
  "mountain hiking trail river boat harbour market coffee bread cheese window castle music piano violin " +
  "rocket planet orbit comet desert cactus forest maple winter summer").split(" ");
export const CATEGORIES = ["tech", "news", "food", "travel", null];
export const TIED = [3, 20, 100, 250];
export const ROWS = 300;

/** A small deterministic PRNG (mulberry32), so every run seeds the same table. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedRows(count = ROWS): Row[] {
  const rand = prng(7);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" ");
  const rows: Row[] = [];
  for (let id = 1; id <= count; id++) {
    rows.push({
      id,
      title: id % 17 === 0 ? null : words(3),
      body: id % 9 === 0 || id % 17 === 0 ? null : words(8),
      category: CATEGORIES[id % CATEGORIES.length]!,
      price: id % 11 === 0 ? null : Math.round(((id * 7.3) % 100) * 100) / 100,
      stock: id % 13 === 0 ? null : (id * 3) % 20,
      active: id % 10 === 0 ? null : id % 2 === 0,
      code: `r${id}`,
    });
  }
  for (const id of TIED.filter((id) => id <= count)) Object.assign(rows[id - 1]!, { title: "identical twin text", body: "same words exactly here", category: "tech", price: 10, stock: 5, active: true });
  return rows;
}

export const COLUMNS: Column[] = [
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "price", role: "metadata", filter_type: "float" },
  { name: "stock", role: "metadata", filter_type: "integer" },
  { name: "active", role: "metadata", filter_type: "boolean" },
  { name: "code", role: "metadata", filter_type: "keyword" },
];

/** The configuration a PUT moves to: body first with its own prefix, more dimensions. */
export const NEW_COLUMNS: Column[] = [
  { name: "title", role: "embedding", ordinal: 2 },
  { name: "body", role: "embedding", ordinal: 1, name_prefix: "Body: " },
  ...COLUMNS.filter((c) => c.role === "metadata"),
];

export const OLD_CONFIG: Config = { columns: COLUMNS, dimensions: 64, pk: "id" };
export const NEW_CONFIG: Config = { columns: NEW_COLUMNS, dimensions: 96, pk: "id" };

const num = (v: Row[string] | undefined) => (v === null || v === undefined ? null : Number(v));
const Q = "vector search engine with postgres replication";

export const PROBES: Probe[] = [
  { body: { query: Q } },
  { body: { query: "identical twin text same words", limit: 4 } },
  { body: { query: Q, limit: 1 } },
  { body: { query: Q, limit: 100 } },
  { body: { query: "cooking pasta with cheese and bread", limit: 100, min_similarity_score: 0.2 } },
  { body: { query: Q, limit: 100, filters: { category: { eq: "tech" } } }, where: (r) => r.category === "tech" },
  { body: { query: Q, limit: 100, filters: { category: "news" } }, where: (r) => r.category === "news" },
  { body: { query: Q, limit: 100, filters: { category: { neq: "tech" } } }, where: (r) => r.category !== "tech" },
  { body: { query: Q, limit: 100, filters: { price: { gt: 50 } } }, where: (r) => num(r.price) !== null && num(r.price)! > 50 },
  { body: { query: Q, limit: 100, filters: { price: { gte: 10, lt: 30 } } }, where: (r) => num(r.price) !== null && num(r.price)! >= 10 && num(r.price)! < 30 },
  { body: { query: Q, limit: 100, filters: { stock: { lte: 4 } } }, where: (r) => num(r.stock) !== null && num(r.stock)! <= 4 },
  { body: { query: Q, limit: 100, filters: { category: { in: ["food", "travel"] } } }, where: (r) => r.category === "food" || r.category === "travel" },
  { body: { query: Q, limit: 100, filters: { stock: [3, 6, 9] } }, where: (r) => [3, 6, 9].includes(num(r.stock) as number) },
  { body: { query: Q, limit: 100, filters: { category: { nin: ["tech", "news", "food"] } } }, where: (r) => !["tech", "news", "food"].includes(r.category as string) },
  { body: { query: Q, limit: 100, filters: { category: { exists: false } } }, where: (r) => r.category === null },
  { body: { query: Q, limit: 100, filters: { price: { exists: true }, active: { eq: false } } }, where: (r) => r.price !== null && r.active === false },
  { body: { query: Q, limit: 100, filters: { active: { neq: true } } }, where: (r) => r.active !== true },
  {
    body: { query: Q, limit: 100, filters: { $or: [{ category: "food" }, { price: { gt: 90 } }] } },
    where: (r) => r.category === "food" || (num(r.price) !== null && num(r.price)! > 90),
  },
  {
    body: { query: "mountain river boat", limit: 100, filters: { active: true, $or: [{ stock: { lt: 3 } }, { $or: [{ category: { exists: false } }, { category: "travel" }] }] } },
    where: (r) => r.active === true && ((num(r.stock) !== null && num(r.stock)! < 3) || r.category === null || r.category === "travel"),
  },
];

/** A probe that sees exactly the rows with these codes (one per source row), whatever their score. */
export const codesProbe = (codes: string[], query = Q): Probe => ({ body: { query, limit: 100, filters: { code: { in: codes } } }, where: (r) => codes.includes(r.code as string) });
