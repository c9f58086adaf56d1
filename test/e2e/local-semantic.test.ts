// The offline semantic model end to end: the real process over HTTP, a real Postgres source of 200
// products, provider `local` with `local-semantic-v1`. Backfill, a paraphrase that shares no word
// with its product finds it, a source edit is picked up, and /metrics counts the model like any
// provider. The other e2e tests keep `local-lexical-v1`, which is far faster.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { products } from "../../src/demo/products.ts";
import { eventually } from "../harness.ts";
import { eventuallyStatus, must } from "./helpers.ts";
import { openPgWorld, type PgWorld } from "./postgres-world.ts";

const MODEL = "local-semantic-v1";

let w: PgWorld;
let table: any;

const body = (over: Record<string, unknown> = {}) => ({
  name: "products",
  connection_id: w.connectionId,
  embedding_provider_id: w.providerId,
  source_table: "products",
  primary_key_column: "id",
  columns: [
    { name: "name", role: "embedding", ordinal: 1 },
    { name: "description", role: "embedding", ordinal: 2 },
    { name: "category", role: "metadata", filter_type: "keyword" },
    { name: "price", role: "metadata", filter_type: "float" },
  ],
  embedding_model: MODEL,
  embedding_dimensions: 512,
  sync_mode: "batch",
  ...over,
});

type Result = { id: string; similarity_score: number; embedded_text: string };
const query = async (text: string, limit = 5): Promise<{ results: Result[]; model: string }> => must(await w.api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: text, limit }), 200);

beforeAll(async () => {
  w = await openPgWorld();
  await w.pg.sql`CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, description text, category text NOT NULL, price double precision NOT NULL, in_stock boolean NOT NULL)`;
  await w.pg.sql`INSERT INTO products ${w.pg.sql(products())}`;
  table = must(await w.api.call("POST", "/v1/vector-tables", body()), 201);
  must(await w.api.call("POST", `/v1/vector-tables/${table.id}/backfill`), 200);
  await eventuallyStatus(w.api, table.id, "synced", 60_000);
}, 90_000);
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

describe("happy", () => {
  test("backfilled with every product", async () => {
    expect(must(await w.api.call("GET", `/v1/vector-tables/${table.id}`), 200)).toMatchObject({ sync_status: "synced", total_rows: 200, synced_rows: 200, embedding_model: MODEL });
  });

  test("a paraphrase finds its product: no word in common with “camping tent”", async () => {
    const answer = await query("portable shelter for a night in the woods");
    expect(answer.model).toBe(MODEL);
    expect(answer.results[0]!.embedded_text).toContain("camping tent");
    expect(answer.results[0]!.similarity_score).toBeGreaterThan(0.5);
  });

  test("an edit in the source is embedded by the next pass and found by its meaning", async () => {
    await w.pg.sql`UPDATE products SET name = 'Glow-in-the-dark cactus lantern', description = 'A solar powered lamp shaped like a cactus that glows all night.' WHERE id = 42`;
    await eventually(async () => (await query("a light for the desert that charges from the sun", 1)).results[0]?.id === "42", 30_000, 200);
  });

  test("/metrics counts the model's calls and tokens like any provider's", async () => {
    const text = await (await fetch(`${w.proc.url}/metrics`)).text();
    const value = (name: string) => Number(text.match(new RegExp(`^${name}\\{[^}]*model="${MODEL}"[^}]*\\} (\\d+)`, "m"))?.[1] ?? 0);
    expect(text).toMatch(new RegExp(`vecsync_embedding_requests_total\\{[^}]*provider="local"[^}]*outcome="ok"[^}]*\\}`));
    expect(value("vecsync_embedding_requests_total")).toBeGreaterThan(2); // the backfill's pages and the queries
    expect(value("vecsync_embedding_tokens_total")).toBeGreaterThan(200 * 10);
  });
});

describe("errors", () => {
  test("a size the model does not make is refused at creation", async () => {
    const res = await w.api.call("POST", "/v1/vector-tables", body({ name: "products-256", embedding_dimensions: 256 }));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("local-semantic-v1 produces exactly 512 dimensions, not 256");
  });
});
