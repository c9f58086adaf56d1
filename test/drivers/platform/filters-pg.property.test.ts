// Property: for any valid docs/vector-tables.md#filters filter and any rows (nulls included), the Postgres WHERE
// compiled by filters-pg.ts selects exactly the rows the managed store's in-memory predicate
// keeps, so platform and managed modes answer the same filters the same way.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import fc from "fast-check";
import { compilePg, PG_TYPES } from "../../../src/drivers/platform/filters-pg.ts";
import { metadataParams } from "../../../src/drivers/platform/pgvector-rows.ts";
import { throwawayPostgres, type ThrowawayDatabase } from "../../harness.ts";
import { expectedMatches, sqlEdgeArbitraries } from "../vector-store/filter-arbitraries.ts";
import { SPEC } from "../vector-store/helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const cols = SPEC.metadata;
let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await throwawayPostgres();
  const columns = cols.map((c, i) => `, m_${i} ${PG_TYPES[c.type]}`).join("");
  await db.sql.unsafe(`CREATE TABLE t (id integer PRIMARY KEY${columns})`);
});
afterAll(async () => {
  await db?.[Symbol.asyncDispose]();
});

// The last ones must survive an `in` list's array literal (filters-pg.ts arrayText) and quoting.
const { row, filter } = sqlEdgeArbitraries(["a", "b", "B", "c", "", "a b", "ä", "😀", 'say "hi"', "back\\slash", "{x,y}", "NULL", "it's", " "]);

test("the Postgres compilation and the managed store's predicate agree on random filters and rows", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 25 }), filter, async (rows, f) => {
      const matches = expectedMatches(f, cols, rows);
      if (!matches) return true; // refused: nothing to compare
      const { node, expected } = matches;
      const json = JSON.stringify(rows.map((m, i) => [i, ...metadataParams(SPEC, m, String(i))]));
      const params: (string | null)[] = [];
      const where = compilePg(node, cols, params);
      // One round trip: load the rows from JSON (text values, cast per column) and select.
      const casts = ["integer", ...cols.map((c) => ({ keyword: "text", integer: "bigint", float: "float8", boolean: "boolean" })[c.type])];
      const loaded = casts.map((cast, i) => `(r->>${i})::${cast} AS ${i === 0 ? "id" : `m_${i - 1}`}`).join(", ");
      const got = await db.sql.begin(async (tx) => {
        await tx.unsafe("DELETE FROM t");
        await tx.unsafe(`INSERT INTO t SELECT ${loaded} FROM jsonb_array_elements($1::text::jsonb) AS r`, [json]);
        return tx.unsafe(`SELECT id FROM t WHERE ${where} ORDER BY id`, params);
      });
      expect(got.map((r) => Number(r.id))).toEqual(expected);
    }),
    { numRuns: 300, seed: 17 },
  );
});
