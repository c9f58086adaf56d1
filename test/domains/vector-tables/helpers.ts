// Fixtures for the vector-tables and query tests: a real Postgres source table, a connection to
// it and a `local` provider made through the API, and a way to fill a table's collection with
// exactly what a backfill writes (render.ts + the provider's document vectors) without the engine.
import { afterAll, beforeAll } from "bun:test";
import { and, eq } from "drizzle-orm";
import { providerForEmbedding } from "../../../src/domains/embedding-providers/embedding.ts";
import { renderMetadata, renderText } from "../../../src/domains/vector-tables/render.ts";
import { vectorTableOf } from "../../../src/domains/vector-tables/service.ts";
import { tableStore } from "../../../src/domains/vector-tables/storage.ts";
import { vectorTables, type ColumnConfig, type SyncStatus } from "../../../src/domains/vector-tables/tables.ts";
import type { SourceValue } from "../../../src/drivers/sources/types.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import { createTestApp, PG_ADMIN_URL, throwawayPostgres, type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import type { Clock } from "../../../src/shared/clock.ts";
import { json, newOrganization, type Bearer, type TestOrg } from "../../helpers/organizations.ts";

export type DocRow = { id: number; title: string | null; body: string | null; category: string | null; price: number | null; stock: number | null; active: boolean | null };

const topics = ["vector search engines", "postgres replication slots", "embedding models and tokens", "cooking pasta at home", "mountain hiking trails"];
const categories = ["tech", "news", "food", null];

/** 40 rows: varied words, some nulls in every metadata column, and identical texts at ids 3, 20 and 100 (ties). */
export function docRows(): DocRow[] {
  const rows: DocRow[] = [];
  for (let i = 1; i <= 40; i++) {
    const id = i === 40 ? 100 : i;
    const topic = topics[i % topics.length]!;
    rows.push({
      id,
      title: `${topic} part ${i % 7}`,
      body: i % 9 === 0 ? null : `notes about ${topic} with detail ${i % 4} and ${["alpha", "beta", "gamma"][i % 3]}`,
      category: categories[i % categories.length]!,
      price: i % 11 === 0 ? null : (i * 7.5) % 100,
      stock: i % 13 === 0 ? null : (i * 3) % 20,
      active: i % 10 === 0 ? null : i % 2 === 0,
    });
  }
  for (const id of [3, 20, 100]) Object.assign(rows.find((r) => r.id === id)!, { title: "identical twin text", body: "same words exactly", category: "tech", price: 10, stock: 5, active: true });
  return rows;
}

export const DOC_COLUMNS: ColumnConfig[] = [
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "price", role: "metadata", filter_type: "float" },
  { name: "stock", role: "metadata", filter_type: "integer" },
  { name: "active", role: "metadata", filter_type: "boolean" },
];

/** Creates `docs` (and a text-keyed `notes`) in the throwaway database. */
export async function createSourceTables(pg: ThrowawayDatabase): Promise<void> {
  await pg.sql`CREATE TABLE docs (id integer PRIMARY KEY, title text, body text, category varchar(40), price double precision, stock integer, active boolean)`;
  for (const r of docRows()) await pg.sql`INSERT INTO docs ${pg.sql(r)}`;
  await pg.sql`CREATE TABLE notes (slug text PRIMARY KEY, content text NOT NULL)`;
}

const pgUser = new URL(PG_ADMIN_URL).username || "postgres";
const pgPort = Number(new URL(PG_ADMIN_URL).port || 5432);

export async function sourceConnection(app: TestApp, key: Bearer, pg: ThrowawayDatabase, opts: { environmentId?: string; mode?: string; name?: string } = {}): Promise<string> {
  const headers: Record<string, string> = { ...key, ...(opts.environmentId ? { "x-environment-id": opts.environmentId } : {}) };
  const credentials = { host: "127.0.0.1", port: pgPort, database: pg.name, user: pgUser, password: "unused-trust-auth" };
  const res = await app.request("POST", "/v1/providers/db_relational/connections", { headers, body: { name: opts.name ?? `src-${crypto.randomUUID().slice(0, 8)}`, mode: opts.mode ?? "managed", credentials } });
  if (res.status !== 201) throw new Error(`connection: ${res.status} ${await res.text()}`);
  return (await json(res)).id;
}

export async function localProvider(app: TestApp, key: Bearer, opts: { environmentId?: string } = {}): Promise<string> {
  const headers: Record<string, string> = { ...key, ...(opts.environmentId ? { "x-environment-id": opts.environmentId } : {}) };
  const res = await app.request("POST", "/v1/embedding-providers", { headers, body: { name: `local-${crypto.randomUUID().slice(0, 8)}`, provider: "local" } });
  if (res.status !== 201) throw new Error(`provider: ${res.status} ${await res.text()}`);
  return (await json(res)).id;
}

export type Fixture = { connectionId: string; providerId: string };

export const tableBody = (f: Fixture, over: Record<string, unknown> = {}) => ({
  name: `docs-${crypto.randomUUID().slice(0, 8)}`,
  connection_id: f.connectionId,
  embedding_provider_id: f.providerId,
  source_table: "docs",
  primary_key_column: "id",
  columns: DOC_COLUMNS,
  embedding_model: "local-lexical-v1",
  embedding_dimensions: 64,
  ...over,
});

export function createTable(app: TestApp, key: Bearer, body: unknown, environmentId?: string): Promise<Response> {
  return app.request("POST", "/v1/vector-tables", { headers: { ...key, ...(environmentId ? { "x-environment-id": environmentId } : {}) }, body });
}

export async function newTable(app: TestApp, key: Bearer, body: unknown, environmentId?: string): Promise<any> {
  const res = await createTable(app, key, body, environmentId);
  if (res.status !== 201) throw new Error(`vector table: ${res.status} ${await res.text()}`);
  return json(res);
}

/** Sets engine-owned fields directly, as the engine would. */
export async function setTableState(app: TestApp, id: string, state: Partial<typeof vectorTables.$inferInsert> & { syncStatus?: SyncStatus }): Promise<void> {
  await app.services.database.db.update(vectorTables).set(state).where(eq(vectorTables.id, id));
}

export async function activeTasksOf(app: TestApp, id: string) {
  const rows = await app.services.database.db.select().from(tasks).where(eq(tasks.targetId, id));
  return rows.filter((t) => t.status === "pending" || t.status === "running");
}

export async function tasksOf(app: TestApp, orgId: string, id: string) {
  return app.services.database.db.select().from(tasks).where(and(eq(tasks.orgId, orgId), eq(tasks.targetId, id)));
}

/**
 * Writes what a backfill of `rows` writes: rendered text, typed metadata, the provider's
 * document vectors, into its collection or platform table; rows with no text are left out. Then
 * marks the table `synced`.
 */
export async function seedCollection(app: TestApp, org: TestOrg, table: { id: string; name: string; embedding_provider_id: string; embedding_model: string; embedding_dimensions: number; columns: ColumnConfig[] }, rows: DocRow[]): Promise<void> {
  const provider = await providerForEmbedding(app.services, org.id, table.embedding_provider_id);
  const rendered = rows.map((r) => ({ r, text: renderText(table.columns, r as unknown as Record<string, SourceValue>) })).filter((x) => x.text !== null);
  const vectors = await provider.embed(rendered.map((x) => x.text!), { model: table.embedding_model, dimensions: table.embedding_dimensions, kind: "document" });
  // Through the table's storage: the managed collection, or the platform table in the source.
  const store = await tableStore(app.services, await vectorTableOf(app.services, org.id, table.id));
  await store.upsert(
    rendered.map(({ r, text }, i) => ({ pk: String(r.id), textHash: "t", metaHash: "m", text: text!, metadata: renderMetadata(table.columns, r as unknown as Record<string, SourceValue>), vector: vectors[i]! })),
  );
  await setTableState(app, table.id, { syncStatus: "synced" });
}

export type TableWorld = { app: TestApp; pg: ThrowawayDatabase; org: TestOrg; f: Fixture };

/**
 * The world most vector-table and query tests share: the app, a throwaway Postgres source with
 * the doc tables, an organization, a connection to the source and a `local` provider. Call it at
 * the top of a test file: it is built in `beforeAll` (later `beforeAll`s of the file see it) and
 * disposed in `afterAll`; `take` hands it to the file's own variables, e.g.
 * `useTableWorld({ clock }, (w) => ({ app, org, f } = w))`.
 */
export function useTableWorld(opts: { clock?: Clock }, take: (world: TableWorld) => unknown): void {
  let app: TestApp | undefined;
  let pg: ThrowawayDatabase | undefined;
  beforeAll(async () => {
    app = await createTestApp(opts.clock ? { clock: opts.clock } : {});
    pg = await throwawayPostgres();
    await createSourceTables(pg);
    const org = await newOrganization(app);
    const f = { connectionId: await sourceConnection(app, org.owner.key, pg), providerId: await localProvider(app, org.owner.key) };
    take({ app, pg, org, f });
  });
  afterAll(async () => {
    await app?.[Symbol.asyncDispose]();
    await pg?.[Symbol.asyncDispose]();
  });
}
