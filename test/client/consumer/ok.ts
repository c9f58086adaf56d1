// A consumer of @vecsync/client that must compile: typed filters, typed results, plain tRPC calls.
import { createVecsyncClient, vecsyncError, vectorTable, type Filter, type RouterOutputs } from "@vecsync/client";

type Products = { category: "keyword"; price: "float"; stock: "integer"; in_stock: "boolean" };

export async function main(): Promise<void> {
  const client = createVecsyncClient({ url: "http://127.0.0.1:8080", apiKey: "vsk_example" });
  const products = vectorTable<Products>(client, "vt_1");
  const answer = await products.query({
    query: "waterproof jacket",
    limit: 5,
    filters: { category: ["outdoors", "sports"], price: { gte: 20, lt: 100 }, $or: [{ in_stock: true }, { stock: { lte: 7 } }] },
  });
  const first = answer.results[0];
  const price: number | null | undefined = first?.metadata.price;
  const category: string | null | undefined = first?.metadata.category;
  const score: number | undefined = first?.similarity_score;

  const raw = await client.query.search.mutate({ vector_table_id: "vt_1", query: "tent", filters: { anything: { gte: 1 } } });
  const total: number = raw.total_results;
  const page: RouterOutputs["vectorTables"]["list"] = await client.vectorTables.list.query();
  const name: string | undefined = page.data[0]?.name;
  const reusable: Filter<Products> = { category: { neq: "clearance" }, in_stock: { exists: true } };
  await client.connections.create.mutate({
    provider: "db_relational",
    name: "shop",
    mode: "managed",
    credentials: { host: "db.internal", database: "shop", user: "reader", password: "secret" },
  });
  try {
    await client.vectorTables.backfill.mutate({ vector_table_id: "vt_1" });
  } catch (err) {
    const error = vecsyncError(err);
    if (error?.code === "backfill_running") console.log(error.status, error.message);
  }
  // The runtime's own fetch fits the `fetch` option, whichever lib types it.
  const proxied = createVecsyncClient({ url: "http://127.0.0.1:8080", fetch: globalThis.fetch, headers: { "X-Environment-Id": "env_1" } });
  await proxied.health.query();
  console.log(price, category, score, total, name, reusable);
}
