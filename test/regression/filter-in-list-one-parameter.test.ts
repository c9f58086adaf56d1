// Regression: a filter's `in`/`nin` list was compiled to one bound value per item, `IN (?, ?, …)`,
// so every list length made another SQL statement. The read path keeps up to 512 prepared
// statements, and one with 1,000-value lists held hundreds of KB to MBs: a read_only key could
// make the process hold gigabytes by querying with lists of ever other lengths. A filter of 40
// lists of 1,000 values (50 are allowed) also passed SQLite's 32,766 bound values and failed.
// Now each list is one JSON value (`IN (SELECT value FROM json_each(?))`; pgvector: `= ANY($n)`),
// so filters of one shape share one statement, and the statement cache is bounded by bytes.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { CACHE_MAX_BYTES, CACHED, CACHED_BYTES } from "../../src/db/fast-reads.ts";
import { collectionName, renderText } from "../../src/domains/vector-tables/render.ts";
import type { SourceValue } from "../../src/drivers/sources/types.ts";
import type { TestApp } from "../harness.ts";
import { json, readOnlyKey, type Bearer, type TestOrg } from "../helpers/organizations.ts";
import { DOC_COLUMNS, docRows, newTable, seedCollection, tableBody, useTableWorld, type DocRow, type Fixture } from "../domains/vector-tables/helpers.ts";

setDefaultTimeout(30_000);

let app: TestApp, org: TestOrg, f: Fixture;
let table: any;
let key: Bearer;
const rows = docRows();

useTableWorld({}, (w) => ({ app, org, f } = w));
beforeAll(async () => {
  table = await newTable(app, org.owner.key, tableBody(f, { name: "docs" }));
  await seedCollection(app, org, table, rows);
  key = await readOnlyKey(app, org.owner);
});

const numbered = <T>(n: number, value: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => value(i));
const client = () => app.services.database.client as unknown as Record<symbol, number>;
const CATEGORIES = ["tech", "news", "food"];

describe("happy", () => {
  test("40 lists of 1,000 values (40,000 in all) answer exactly the rows that pass them", async () => {
    // Branch j keeps the rows with stock j and category CATEGORIES[j % 3]; the other values match nothing.
    const filters = {
      $or: numbered(20, (j) => ({
        category: { in: [...numbered(999, (i) => `none-${j}-${i}`), CATEGORIES[j % 3]!] },
        stock: { in: [...numbered(999, (i) => 1000 + i), j] },
      })),
    };
    const res = await app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: key, body: { query: "notes", limit: 100, filters } });
    const answer = await json(res);
    expect([res.status, answer.error]).toEqual([200, undefined]);
    const passes = (r: DocRow) => r.stock !== null && r.stock < 20 && r.category === CATEGORIES[r.stock % 3];
    const expected = rows.filter((r) => passes(r) && renderText(DOC_COLUMNS, r as unknown as Record<string, SourceValue>) !== null).map((r) => String(r.id));
    expect(expected.length).toBeGreaterThan(2);
    expect(answer.results.map((r: { id: string }) => r.id).sort()).toEqual(expected.sort());
  });

  test("filters of one shape share one statement whatever their lists' lengths", async () => {
    const name = collectionName(table.id, table.name);
    const filter = (n: number) => ({ category: { in: [...numbered(n - 1, (i) => `none-${i}`), "tech"] } });
    const count = await app.services.vectors.count(name, filter(1));
    const statements = client()[CACHED]!;
    for (const n of [2, 10, 500, 1000]) expect(await app.services.vectors.count(name, filter(n))).toBe(count);
    expect(client()[CACHED]).toBe(statements);
  });

  test("the statement cache stays under its byte bound after many distinct big statements", async () => {
    const db = app.services.database.client;
    for (let n = 1000; n < 1400; n++) {
      const list = numbered(n, () => "?").join(", ");
      await db.execute({ sql: `SELECT count(*) AS n FROM organizations WHERE id IN (${list})`, args: numbered(n, (i) => `x${i}`) });
    }
    expect(client()[CACHED_BYTES]).toBeGreaterThan(0);
    expect(client()[CACHED_BYTES]).toBeLessThanOrEqual(CACHE_MAX_BYTES);
    expect(client()[CACHED]).toBeLessThan(400); // the oldest went out
  });
});

describe("errors", () => {
  test("one list of 5,000 values is refused, as before: a list takes at most 1,000", async () => {
    const filters = { stock: { in: numbered(5000, (i) => i) } };
    const res = await app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: key, body: { query: "notes", filters } });
    const body = await json(res);
    expect([res.status, body.error.code]).toEqual([400, "validation_error"]);
    expect(body.error.details[0].message).toContain("1000");
  });
});
