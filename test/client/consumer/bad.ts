// A consumer of @vecsync/client that must not compile: each `// error:` names the TypeScript error
// code and a phrase of its message expected on that line, and no other line may have an error.
import { createVecsyncClient, vectorTable } from "@vecsync/client";

type Products = { category: "keyword"; price: "float" };
const client = createVecsyncClient({ url: "http://127.0.0.1:8080", apiKey: "vsk_example" });
const products = vectorTable<Products>(client, "vt_1");

export async function main(): Promise<void> {
  await products.query({ query: "q", filters: { price: { $gte: 10 } } }); // error: TS2353 '$gte' does not exist
  await products.query({ query: "q", filters: { price: { gte: "10" } } }); // error: TS2322 Type 'string' is not assignable to type 'number'
  await products.query({ query: "q", filters: { category: { gt: 1 } } }); // error: TS2353 'gt' does not exist
  await products.query({ query: "q", filters: { colour: "red" } }); // error: TS2353 'colour' does not exist
  await products.query({ query: "q", filters: { category: { eq: null } } }); // error: TS2322 Type 'null' is not assignable
  await products.query({ query: "q", filters: { $or: [] } }); // error: TS2322 Source has 0 element(s) but target requires 1
  await client.query.search.mutate({ vector_table_id: "vt_1", query: "q", filters: { price: { between: [1, 2] } } }); // error: TS2353 'between' does not exist
  const answer = await products.query({ query: "q" });
  const price: string | null | undefined = answer.results[0]?.metadata.price; // error: TS2322 Type 'number' is not assignable to type 'string'
  await client.connections.create.mutate({ provider: "db_mongo", name: "x", mode: "managed", credentials: { host: "h", database: "d", user: "u", password: "p" } }); // error: TS2322 '"db_mongo"' is not assignable
  console.log(price);
}
