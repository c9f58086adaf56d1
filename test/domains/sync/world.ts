// A sync test world: a service with the fake emb_a provider, an organization, a throwaway
// Postgres source table `docs`, a connection and provider made through the API, and vector table
// rows inserted directly (the engine's contract is the row, the task queue and the collection).
import { eq } from "drizzle-orm";
import type postgres from "postgres";
import { createTestApp, eventually, throwawayPostgres, type TestApp, type ThrowawayDatabase } from "../../harness.ts";
import { json, newOrganization, type TestOrg } from "../../helpers/organizations.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../../fakes/embeddings/server.ts";
import { collectionName, generationSpec, renderMetadata, renderText } from "../../../src/domains/vector-tables/render.ts";
import { vectorTables, type ColumnConfig, type VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import type { Services } from "../../../src/services.ts";
import { newId } from "../../../src/shared/ids.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import { BACKFILL, REBACKFILL } from "../../../src/domains/tasks/kinds.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { openVectorStore } from "../../../src/services.ts";
import { createLogger } from "../../../src/shared/log.ts";
import type { Config } from "../../../src/config.ts";
import type { Clock } from "../../../src/shared/clock.ts";
import { expect } from "bun:test";

export const MODEL = "text-embedding-3-small";
export const DIMS = 32;

export const COLUMNS: ColumnConfig[] = [
  { name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " },
  { name: "body", role: "embedding", ordinal: 2 },
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "price", role: "metadata", filter_type: "float" },
];

export type World = {
  app: TestApp;
  services: Services;
  org: TestOrg;
  pg: ThrowawayDatabase;
  sql: postgres.Sql;
  fake: FakeEmbeddings;
  connectionId: string;
  environmentId: string;
  providerId: string;
  dispose(): Promise<void>;
};

export async function createSourceTable(sql: postgres.Sql, rows: number): Promise<void> {
  await sql`CREATE TABLE docs (id integer PRIMARY KEY, title text, body text, category text, price double precision)`;
  await insertDocs(sql, 1, rows);
}

export async function insertDocs(sql: postgres.Sql, from: number, to: number): Promise<void> {
  if (to < from) return;
  await sql`INSERT INTO docs SELECT g, 'title ' || g, 'body text of row ' || g, 'cat' || (g % 3), g * 1.5 FROM generate_series(${from}::int, ${to}::int) g`;
}

export async function createWorld(opts: { rows?: number; env?: Record<string, string>; fakeLatencyMs?: number; clock?: Clock } = {}): Promise<World> {
  const fake = await startFakeEmbeddings("emb_a", { switches: { latencyMs: opts.fakeLatencyMs ?? 0 } });
  const app = await createTestApp({ env: { VECSYNC_EMB_A_URL: fake.url, VECSYNC_SYNC_INTERVAL: "3600", VECSYNC_CDC_POLL_MS: "100", ...opts.env }, clock: opts.clock });
  const pg = await throwawayPostgres();
  await createSourceTable(pg.sql, opts.rows ?? 0);
  const org = await newOrganization(app);
  const url = new URL(pg.url);
  const conn = await app.request("POST", "/v1/providers/db_relational/connections", {
    headers: org.owner.key,
    body: { name: "src", mode: "managed", credentials: { host: url.hostname, port: Number(url.port || 5432), database: pg.name, user: url.username || "postgres", password: "unused-password", ssl_mode: "disable" } },
  });
  if (conn.status !== 201) throw new Error(`connection: ${conn.status} ${await conn.text()}`);
  const connection = await json(conn);
  const prov = await app.request("POST", "/v1/embedding-providers", { headers: { ...org.owner.key, "x-environment-id": connection.environment_id }, body: { name: "fake-a", provider: "emb_a", api_key: fake.apiKey } });
  if (prov.status !== 201) throw new Error(`provider: ${prov.status} ${await prov.text()}`);
  const provider = await json(prov);
  return {
    app,
    services: app.services,
    org,
    pg,
    sql: pg.sql,
    fake,
    connectionId: connection.id,
    environmentId: connection.environment_id,
    providerId: provider.id,
    async dispose() {
      await app[Symbol.asyncDispose]();
      await pg[Symbol.asyncDispose]();
      await fake.stop();
    },
  };
}

/** Inserts a vector table row (status pending) and creates its empty collection, as POST does. */
export async function newVectorTable(w: World, over: Partial<VectorTableRow> = {}): Promise<VectorTableRow> {
  const id = newId();
  const name = over.name ?? `vt${id.slice(0, 6)}`;
  const now = w.services.clock.now().toISOString();
  const row: VectorTableRow = {
    id,
    orgId: w.org.id,
    environmentId: w.environmentId,
    connectionId: w.connectionId,
    embeddingProviderId: w.providerId,
    name,
    sourceTable: "docs",
    primaryKeyColumn: "id",
    columns: COLUMNS,
    embeddingModel: MODEL,
    embeddingDimensions: DIMS,
    mode: "managed",
    syncMode: "batch",
    syncStatus: "pending",
    vectorstoreCollection: collectionName(id, name),
    platformVectorRef: null,
    numericPk: true,
    configVersion: 1,
    servedConfigVersion: 1,
    servingModel: MODEL,
    servingDimensions: DIMS,
    totalRows: 0,
    syncedRows: 0,
    rowsPending: 0,
    lastSyncStartedAt: null,
    lastSyncAt: null,
    oldestPendingChangeAt: null,
    sourceLagBytes: null,
    cdcCheckpoint: null,
    lastError: null,
    lastErrorAt: null,
    feedResyncReason: null,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
  await w.services.database.db.insert(vectorTables).values(row);
  if (row.mode === "managed") await w.services.vectors.createCollection(row.vectorstoreCollection, generationSpec(row));
  return row;
}

/** The scheduler started and a cdc table backfilled: its consumer streams from then on. */
export async function streamingTable(w: World, timeoutMs?: number): Promise<VectorTableRow> {
  w.services.scheduler.start();
  const table = await newVectorTable(w, { syncMode: "cdc" });
  await taskDone(w, (await enqueueFill(w, table)).id, timeoutMs);
  return table;
}

/** What POST …/backfill does: status backfilling and the task, in one transaction. */
export async function enqueueFill(w: World, table: VectorTableRow, taskType: "backfill" | "rebackfill" = "backfill") {
  const row = (await tableRow(w, table.id))!;
  return w.services.database.db.transaction(async (tx) => {
    if (taskType === "backfill") await tx.update(vectorTables).set({ syncStatus: "backfilling" }).where(eq(vectorTables.id, table.id));
    return w.services.tasks.enqueue(tx, taskType === "backfill" ? BACKFILL : REBACKFILL, { orgId: table.orgId, targetId: table.id, payload: { vector_table_id: table.id, config_version: row.configVersion }, exclusiveKey: `backfill:${table.id}` });
  });
}

export async function tableRow(w: World, id: string): Promise<VectorTableRow | undefined> {
  const [row] = await w.services.database.db.select().from(vectorTables).where(eq(vectorTables.id, id));
  return row;
}

export async function updateTableRow(w: World, id: string, changes: Partial<VectorTableRow>): Promise<void> {
  await w.services.database.db.update(vectorTables).set(changes).where(eq(vectorTables.id, id));
}

export type StoredRow = { text: string; metadata: Record<string, unknown> };

/** The whole collection as pk → text and metadata (an exact search over everything). */
export async function storedSet(services: Pick<Services, "vectors">, table: VectorTableRow): Promise<Map<string, StoredRow>> {
  const vector = new Float32Array(table.embeddingDimensions).fill(1);
  const { hits } = await services.vectors.search(table.vectorstoreCollection, { vector, k: 100_000 });
  return new Map(hits.map((h) => [h.pk, { text: h.text, metadata: h.metadata }]));
}

/**
 * The live generation's rows as pk → text, read row by row (not through a search, whose HNSW
 * answer may miss a few rows of a large collection).
 */
export async function storedTexts(services: Pick<Services, "vectors">, table: VectorTableRow): Promise<Map<string, string>> {
  const pks = (await services.vectors.hashes(table.vectorstoreCollection, { limit: 1_000_000 })).map((h) => h.pk);
  const docs = await services.vectors.docs(table.vectorstoreCollection, pks);
  return new Map([...docs.entries()].map(([pk, d]) => [pk, d.text]));
}

export const textsOf = (m: Map<string, StoredRow>) => new Map([...m.entries()].map(([pk, r]) => [pk, r.text]));

/** What the collection must hold for the source as it is now (docs/vector-tables.md#text-and-metadata rendering). */
export async function expectedSet(sql: postgres.Sql, columns: ColumnConfig[] = COLUMNS): Promise<Map<string, StoredRow>> {
  const rows = await sql`SELECT id, title, body, category, price FROM docs ORDER BY id`;
  const out = new Map<string, StoredRow>();
  for (const r of rows) {
    const values = { id: r.id, title: r.title, body: r.body, category: r.category, price: r.price === null ? null : Number(r.price) };
    const text = renderText(columns, values);
    if (text !== null) out.set(String(r.id), { text, metadata: renderMetadata(columns, values) });
  }
  return out;
}

export const sortedEntries = (m: Map<string, StoredRow>) => [...m.entries()].sort(([a], [b]) => Number(a) - Number(b));

/**
 * A table with a fill queued, and the world's data dir handed over: this process lets go of the
 * database and the store so child processes (started with `env`) can take them.
 */
export async function fillForChildren(w: World) {
  const table = await newVectorTable(w);
  const task = await enqueueFill(w, table);
  await w.services.vectors.close();
  w.services.database.close();
  return { table, task, env: { VECSYNC_EMB_A_URL: w.fake.url, VECSYNC_SYNC_INTERVAL: "3600" } };
}

/** Waits for a task of the world's running scheduler to complete. */
export function taskDone(w: World, taskId: string, timeoutMs = 20_000): Promise<true> {
  return eventually(async () => (await w.services.database.db.select().from(tasks).where(eq(tasks.id, taskId)))[0]?.status === "completed", timeoutMs);
}

/** After the service process stopped: its data dir opened offline holds exactly what the source says. */
export async function expectStoreMatchesSource(config: Config, sql: postgres.Sql, table: VectorTableRow): Promise<void> {
  const database = await openDatabase(config.databaseUrl);
  const vectors = await openVectorStore(config, database, createLogger("silent"));
  try {
    expect(sortedEntries(await storedSet({ vectors }, table))).toEqual(sortedEntries(await expectedSet(sql)));
  } finally {
    await vectors.close();
    database.close();
  }
}
