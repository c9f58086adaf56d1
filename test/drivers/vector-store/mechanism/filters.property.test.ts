// Property: for any valid filter and any rows (nulls included), the SQL WHERE and the in-memory
// predicate select exactly the same rows.
import { createClient } from "@libsql/client";
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { compilePredicate, compileSql, type Metadata, parseFilter } from "../../../../src/drivers/store-api/index.ts";
import { bindMetadata } from "../../../../src/drivers/vector-store/rows.ts";
import { filterArbitraries } from "../filter-arbitraries.ts";
import { SPEC } from "../helpers.ts";

const cols = SPEC.metadata;
const client = createClient({ url: ":memory:" });
afterAll(() => client.close());

const keyword = fc.constantFrom("a", "b", "B", "c", "", "a b");
const float = fc.constantFrom(-1.5, 0, 0.1, 1, 2, 2.5, 100, -0);
const integer = fc.integer({ min: -3, max: 3 });
const { row, filter } = filterArbitraries({ keyword, float, integer, bound: fc.oneof(float, integer) });

const DDL = "CREATE TABLE t (id INTEGER PRIMARY KEY, m_0 TEXT, m_1 REAL, m_2 INTEGER, m_3 INTEGER)";

test("SQL and in-memory compilations agree on random filters and rows", async () => {
  await client.execute(DDL);
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 30 }), filter, async (rows, f) => {
      let node;
      try {
        node = parseFilter(f, cols);
      } catch {
        return true; // e.g. nested deeper than 5: refused, nothing to compare
      }
      const where = compileSql(node, cols);
      await client.batch(
        [
          "DELETE FROM t",
          ...rows.map((m, i) => ({ sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?)", args: [BigInt(i), ...bindMetadata(SPEC, m, String(i))] })),
        ],
        "write",
      );
      const rs = await client.execute({ sql: `SELECT id FROM t WHERE ${where.sql} ORDER BY id`, args: where.args });
      const fromSql = rs.rows.map((r) => Number(r.id));
      const pred = compilePredicate<Metadata>(node, (c) => (m) => m[cols[c]!.name] ?? null);
      const fromMemory = rows.flatMap((m, i) => (pred(m) ? [i] : []));
      expect(fromMemory).toEqual(fromSql);
    }),
    { numRuns: 400, seed: 6 },
  );
});
