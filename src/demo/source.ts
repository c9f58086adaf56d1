// Where the demo's sample table lives. The binary knows one place, the local Postgres; a source
// checkout (`bun run demo`) can hand in another (scripts/demo.ts: the warehouse test server).
import postgres from "postgres";
import { shellVar } from "./client.ts";
import { products, type Product } from "./products.ts";

export type ProductColumn = keyof Product;

export type DemoSource = {
  /** One line for the output: what and where. */
  description: string;
  provider: "db_relational" | "db_warehouse";
  credentials: Record<string, unknown>;
  /** The same credentials as the printed curl shows them (a password as a shell variable). */
  shownCredentials: Record<string, unknown>;
  table: string;
  /** A product field's column name in the source (a warehouse folds names to upper case). */
  column(field: ProductColumn): string;
  /** Service settings this source needs (the warehouse endpoint). */
  serviceEnv: Record<string, string>;
  /** Edits one product in the source, as an application would. */
  update(id: number, changes: Partial<Omit<Product, "id">>): Promise<void>;
  /** Removes the sample data unless `keep`; says what was kept, if anything. */
  close(keep: boolean): Promise<string | null>;
};

/** How long the demo waits for Postgres to answer before it calls it unreachable. */
const CONNECT_TIMEOUT_SEC = 3;

const quietly = { onnotice: () => {}, connect_timeout: CONNECT_TIMEOUT_SEC } as const;

/** A fresh database holding `products`, or why nothing answers at `adminUrl`. */
export async function openPostgresSource(adminUrl: string): Promise<{ source: DemoSource } | { unreachable: string }> {
  const admin = postgres(adminUrl, { max: 1, ...quietly });
  try {
    await admin`SELECT 1`;
  } catch (err) {
    await admin.end({ timeout: 1 }).catch(() => {});
    return { unreachable: (err as Error).message };
  }
  const name = `vecsync_demo_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, ...quietly });
  try {
    await sql`CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, description text, category text NOT NULL, price numeric(8,2) NOT NULL, in_stock boolean NOT NULL)`;
    await sql`INSERT INTO products ${sql(products())}`;
  } catch (err) {
    await dropDatabase(admin, sql, name);
    throw err;
  }
  const password = decodeURIComponent(url.password);
  const credentials = {
    host: url.hostname,
    port: Number(url.port || 5432),
    database: name,
    user: decodeURIComponent(url.username) || "postgres",
    // The credentials schema wants a password; a server with trust auth ignores it.
    password: password || "unused-with-trust-auth",
  };
  return {
    source: {
      description: `Postgres ${url.hostname}:${credentials.port}, new database ${name}, table products`,
      provider: "db_relational",
      credentials,
      shownCredentials: password ? { ...credentials, password: shellVar("PGPASSWORD") } : credentials,
      table: "products",
      column: (field) => field,
      serviceEnv: {},
      async update(id, changes) {
        await sql`UPDATE products SET ${sql(changes)} WHERE id = ${id}`;
      },
      async close(keep) {
        if (keep) {
          await Promise.all([sql.end({ timeout: 5 }), admin.end({ timeout: 5 })]);
          const shown = new URL(url);
          if (shown.password) shown.password = "***";
          return `kept the sample database: ${shown.toString()}`;
        }
        await dropDatabase(admin, sql, name);
        return null;
      },
    },
  };
}

async function dropDatabase(admin: postgres.Sql, sql: postgres.Sql, name: string): Promise<void> {
  await sql.end({ timeout: 5 });
  // FORCE: the service's source connections may linger in their pool for a moment.
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
}
