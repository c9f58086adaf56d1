// The filter language's TypeScript type (src/drivers/vector-store/index.ts, shipped in
// @vecsync/client) against the service's own check of it (parse.ts): what one accepts the other
// accepts, and the mistakes a type can see are refused by both. What a type cannot count (depth,
// number of conditions, list length, whole numbers) is listed as such, so the claim stays exact.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { join } from "node:path";
import { FilterError, parseFilter, type MetadataColumn } from "../../src/drivers/store-api/index.ts";
import { filterArbitraries } from "../drivers/vector-store/filter-arbitraries.ts";
import { ROOT } from "../harness.ts";
import { typeErrors } from "./typecheck.ts";

const COLUMNS: MetadataColumn[] = [
  { name: "category", type: "keyword" },
  { name: "price", type: "float" },
  { name: "stock", type: "integer" },
  { name: "active", type: "boolean" },
];
const M = `{ ${COLUMNS.map((c) => `${c.name}: "${c.type}"`).join("; ")} }`;
const FILE = join(ROOT, "src/drivers/store-api/filters/__filter_samples__.ts");

function parserAccepts(filter: unknown): boolean {
  try {
    parseFilter(filter, COLUMNS);
    return true;
  } catch (err) {
    if (err instanceof FilterError) return false;
    throw err;
  }
}

/** Which samples fail to compile as each of `types` (one declaration per line, so a line is a sample). */
function refusedByTypes(samples: unknown[], types: string[]): Set<number>[] {
  const lines = types.flatMap((type) => samples.map((s, i) => `export const s${i}_${type.length}: ${type} = ${JSON.stringify(s)};`));
  const source = [`import type { Filter } from "./language.ts";`, `type M = ${M};`, ...lines].join("\n");
  const refused = types.map(() => new Set<number>());
  for (const d of typeErrors(FILE, source)) {
    const at = d.line - 3;
    refused[Math.floor(at / samples.length)]!.add(at % samples.length);
  }
  return refused;
}

const refusedByType = (samples: unknown[], type: string) => refusedByTypes(samples, [type])[0]!;

// Mistakes a caller makes, each refused by the parser and by Filter<M> (the table's columns known);
// `anyColumns`: also by plain Filter, which knows no column's name or type.
const MISTAKES: { name: string; filter: unknown; anyColumns: boolean }[] = [
  { name: "an operator spelled another way", filter: { price: { $gte: 10 } }, anyColumns: true },
  { name: "an unknown operator", filter: { price: { between: [1, 2] } }, anyColumns: true },
  { name: "a string bound", filter: { price: { gte: "10" } }, anyColumns: true },
  { name: "gt on a keyword column", filter: { category: { gt: 1 } }, anyColumns: false },
  { name: "gt on a boolean column", filter: { active: { gt: 0 } }, anyColumns: false },
  { name: "a number for a keyword", filter: { category: { eq: 5 } }, anyColumns: false },
  { name: "a string for an integer", filter: { stock: { eq: "5" } }, anyColumns: false },
  { name: "a string for a boolean (shorthand)", filter: { active: "true" }, anyColumns: false },
  { name: "a mixed in list", filter: { category: { in: ["a", 1] } }, anyColumns: false },
  { name: "in with a scalar", filter: { category: { in: "a" } }, anyColumns: true },
  { name: "eq null", filter: { category: { eq: null } }, anyColumns: true },
  { name: "null shorthand", filter: { category: null }, anyColumns: true },
  { name: "null in a list", filter: { stock: [1, null] }, anyColumns: true },
  { name: "exists with a string", filter: { category: { exists: "yes" } }, anyColumns: true },
  { name: "an empty condition", filter: { price: {} }, anyColumns: true },
  { name: "an empty $or", filter: { $or: [] }, anyColumns: true },
  { name: "$or not an array", filter: { $or: { category: "a" } }, anyColumns: true },
  { name: "a scalar branch", filter: { $or: ["a"] }, anyColumns: true },
  { name: "an unknown column", filter: { colour: "red" }, anyColumns: false },
  { name: "a bad branch", filter: { $or: [{ category: "a" }, { price: { gte: "1" } }] }, anyColumns: true },
];

// Mistakes only the service can see: the type has no count, depth or integer.
const BEYOND_TYPES: [string, unknown][] = [
  ["a fraction on an integer column", { stock: { eq: 2.5 } }],
  ["nested deeper than 5 levels", { $or: [{ $or: [{ $or: [{ $or: [{ $or: [{ category: "a" }] }] }] }] }] }],
  ["more than 50 conditions", { $or: Array.from({ length: 51 }, (_, i) => ({ stock: i })) }],
  ["more than 1,000 values in a list", { stock: { in: Array.from({ length: 1001 }, (_, i) => i) } }],
];

describe("the filter type and the parser agree", () => {
  test("random filters the parser accepts compile as Filter<M> and as Filter", () => {
    const pools = { keyword: fc.constantFrom("books", "tech", ""), float: fc.constantFrom(0.5, 2.5, -1), integer: fc.integer({ min: -3, max: 3 }), bound: fc.constantFrom(0, 1.5, 3) };
    const samples = fc.sample(filterArbitraries(pools).filter, { seed: 20261124, numRuns: 60 }).filter(parserAccepts);
    expect(samples.length).toBeGreaterThan(50);
    const [typed, untyped] = refusedByTypes(samples, ["Filter<M>", "Filter"]);
    expect([...typed!].map((i) => samples[i])).toEqual([]);
    expect([...untyped!].map((i) => samples[i])).toEqual([]);
  });

  test("each mistake is refused by the parser and by Filter<M>; plain Filter refuses those it can see", () => {
    const [typed, untyped] = refusedByTypes(MISTAKES.map((m) => m.filter), ["Filter<M>", "Filter"]);
    const verdict = (refused: boolean) => (refused ? "refuses" : "accepts");
    const report = MISTAKES.map((m, i) => ({ name: m.name, parser: verdict(!parserAccepts(m.filter)), typed: verdict(typed!.has(i)), untyped: verdict(untyped!.has(i)) }));
    // Without the columns, Filter still refuses wrong operators and value kinds; only the column's own type escapes it.
    expect(report).toEqual(MISTAKES.map((m) => ({ name: m.name, parser: "refuses", typed: "refuses", untyped: verdict(m.anyColumns) })));
  });

  test("limits the type cannot count are the parser's alone", () => {
    const samples = BEYOND_TYPES.map(([, f]) => f);
    expect(samples.filter(parserAccepts)).toEqual([]);
    expect([...refusedByType(samples, "Filter<M>")]).toEqual([]);
  });
});
