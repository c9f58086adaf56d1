// `bun run demo`: the demo of `vecsync demo` (src/demo/), plus a fallback the binary does not have:
// without a reachable Postgres, the sample table goes into the DuckDB-backed warehouse test server
// (test/fakes/warehouse), which is test code and so stays out of the shipped binary.
import { runDemo, type DemoSource } from "../src/demo/index.ts";
import { products } from "../src/demo/products.ts";
import { startFakeWarehouse } from "../test/fakes/warehouse/server.ts";

const USER = "DEMO";
const PASSWORD = "demo-password";

const literal = (v: string | number | boolean) => (typeof v === "string" ? `'${v.replaceAll("'", "''")}'` : String(v));

async function startWarehouseSource(): Promise<{ source: DemoSource; description: string }> {
  const fake = await startFakeWarehouse({ users: [{ user: USER, password: PASSWORD }] });
  await fake.exec("CREATE TABLE PRODUCTS (ID NUMBER(38,0) PRIMARY KEY, NAME VARCHAR NOT NULL, DESCRIPTION VARCHAR, CATEGORY VARCHAR NOT NULL, PRICE NUMBER(8,2) NOT NULL, IN_STOCK BOOLEAN NOT NULL)");
  const values = products().map((p) => `(${[p.id, p.name, p.description, p.category, p.price, p.in_stock].map(literal).join(", ")})`);
  await fake.exec(`INSERT INTO PRODUCTS VALUES ${values.join(",\n")}`);
  const credentials = { auth_method: "password", account: fake.account, user: USER, password: PASSWORD, database: fake.database };
  return {
    description: "the warehouse test server (DuckDB behind the warehouse's HTTP protocol)",
    source: {
      description: `warehouse test server ${fake.url}, account ${fake.account}, table ${fake.database}.PUBLIC.PRODUCTS`,
      provider: "db_warehouse",
      credentials,
      shownCredentials: credentials,
      table: "PRODUCTS",
      column: (field) => field.toUpperCase(),
      serviceEnv: { VECSYNC_WAREHOUSE_URL: fake.url },
      async update(id, changes) {
        const sets = Object.entries(changes).map(([k, v]) => `${k.toUpperCase()} = ${literal(v)}`);
        await fake.exec(`UPDATE PRODUCTS SET ${sets.join(", ")} WHERE ID = ${id}`);
      },
      async close() {
        await fake.close();
        return null;
      },
    },
  };
}

process.exit(await runDemo(process.argv.slice(2), process.env, { fallbackSource: startWarehouseSource }));
