import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { eventually } from "../../harness.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import { runFillTask } from "../../../src/domains/sync/backfill.ts";
import { WRITE_ROWS } from "../../../src/domains/sync/apply.ts";
import { PAGE_SIZE } from "../../../src/domains/sync/pages.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, type World } from "./world.ts";

let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: 700 });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const taskOf = async (id: string) => (await w.services.database.db.select().from(tasks).where(eq(tasks.id, id)))[0]!;

describe("happy", () => {
  test("backfill: the collection equals the source (pks, texts, metadata); status synced with counts", async () => {
    const table = await newVectorTable(w);
    const before = w.fake.counters.inputs;
    const task = await enqueueFill(w, table);
    await eventually(async () => (await taskOf(task.id)).status === "completed", 20_000);
    const row = (await tableRow(w, table.id))!;
    expect(row.syncStatus).toBe("synced");
    expect(row.totalRows).toBe(700);
    expect(row.syncedRows).toBe(700);
    expect(row.lastSyncAt).not.toBeNull();
    expect(row.lastSyncStartedAt).not.toBeNull();
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql)));
    expect(w.fake.counters.inputs - before).toBe(700); // each row embedded once
    const progress = (await taskOf(task.id)).progress as { last_processed_pk: string; rows_processed: number };
    expect(progress).toMatchObject({ last_processed_pk: "700", rows_processed: 700 });
  });

  test("a page's vectors go to the store in writes of at most WRITE_ROWS rows (the event loop turns between them)", async () => {
    const table = await newVectorTable(w);
    const task = await enqueueFill(w, table);
    await eventually(async () => (await taskOf(task.id)).status === "completed", 20_000);
    // Each store write is one transaction that moves the generation's change sequence by one.
    const rs = await w.services.database.client.execute({ sql: "SELECT seq FROM vs_generations WHERE collection = ?", args: [table.vectorstoreCollection] });
    const writes = Number(rs.rows[0]!.seq);
    // 700 rows in pages of PAGE_SIZE, each page in writes of WRITE_ROWS.
    const pages = [PAGE_SIZE, PAGE_SIZE, 700 - 2 * PAGE_SIZE];
    expect(writes).toBe(pages.reduce((n, rows) => n + Math.ceil(rows / WRITE_ROWS), 0));
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql)));
  });

  test("resume: a run starting from a checkpoint embeds only the rows after it", async () => {
    const table = await newVectorTable(w);
    // The first 300 rows are stored and checkpointed by an earlier run (here: a run over them).
    const task = await enqueueFill(w, table);
    await eventually(async () => (await taskOf(task.id)).status === "completed", 20_000);
    const collection = table.vectorstoreCollection;
    const all = await w.services.vectors.hashes(collection, { limit: 10_000 });
    const after = all.filter((h) => Number(h.pk) > 300).map((h) => h.pk);
    await w.services.vectors.delete(collection, after);
    const before = w.fake.counters.inputs;
    const controller = new AbortController();
    const saved: unknown[] = [];
    await runFillTask(w.services, {
      task: await taskOf(task.id),
      payload: { vector_table_id: table.id, config_version: 1 },
      progress: { last_processed_pk: "300", rows_processed: 300, after_key: [300] } as never,
      signal: controller.signal,
      checkpoint: async (p) => void saved.push(p),
      complete: async () => {},
    }, "backfill");
    expect(w.fake.counters.inputs - before).toBe(400);
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql)));
    expect(saved.at(-1)).toMatchObject({ last_processed_pk: "700", rows_processed: 700 });
  });

  test("a replayed page (crash between store write and checkpoint) embeds nothing twice", async () => {
    const table = await newVectorTable(w);
    const task = await enqueueFill(w, table);
    await eventually(async () => (await taskOf(task.id)).status === "completed", 20_000);
    const before = w.fake.counters.inputs;
    await runFillTask(w.services, {
      task: await taskOf(task.id),
      payload: { vector_table_id: table.id, config_version: 1 },
      progress: { last_processed_pk: null, rows_processed: 0 },
      signal: new AbortController().signal,
      checkpoint: async () => {},
      complete: async () => {},
    }, "backfill");
    expect(w.fake.counters.inputs - before).toBe(0);
    expect((await tableRow(w, table.id))!.syncStatus).toBe("synced");
  });

  test("rows whose text renders empty are not embedded but count as synced", async () => {
    await w.sql`INSERT INTO docs (id, title, body, category, price) VALUES (10001, NULL, NULL, 'cat1', 1), (10002, NULL, 'only body', NULL, NULL)`;
    try {
      const table = await newVectorTable(w);
      const task = await enqueueFill(w, table);
      await eventually(async () => (await taskOf(task.id)).status === "completed", 20_000);
      const stored = await storedSet(w.services, table);
      expect(stored.has("10001")).toBe(false);
      expect(stored.get("10002")).toEqual({ text: "only body", metadata: { category: null, price: null } });
      const row = (await tableRow(w, table.id))!;
      expect(row.syncedRows).toBe(702);
      expect(row.totalRows).toBe(702);
    } finally {
      await w.sql`DELETE FROM docs WHERE id > 10000`;
    }
  });
});

describe("errors", () => {
  test("platform mode on a database without the vector extension: the backfill fails at once, saying what to run", async () => {
    const table = await newVectorTable(w, { mode: "platform" });
    const task = await enqueueFill(w, table);
    await eventually(async () => (await taskOf(task.id)).status === "failed", 10_000);
    expect((await taskOf(task.id)).attempts).toBe(1);
    const row = (await tableRow(w, table.id))!;
    expect(row.syncStatus).toBe("error");
    expect(row.lastError).toContain("does not have the vector extension: run CREATE EXTENSION vector;");
    expect(row.platformVectorRef).toBe(`vecsync.vt_${table.id.slice(0, 8)}_${table.name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`);
  });

  test("vector budget: stops before the rows over it, keeps what is stored, error names the budget", async () => {
    // Other tests' tables count toward the organization's budget: measure what is left.
    const { vectorAllowance } = await import("../../../src/domains/sync/budget.ts");
    const stored = w.services.config.freeVectorBudget - (await vectorAllowance(w.services, w.org.id));
    (w.services.config as { freeVectorBudget: number }).freeVectorBudget = stored + 250;
    try {
      const table = await newVectorTable(w);
      const before = w.fake.counters.inputs;
      const task = await enqueueFill(w, table);
      await eventually(async () => (await taskOf(task.id)).status === "failed", 20_000);
      expect((await taskOf(task.id)).attempts).toBe(1);
      expect(w.fake.counters.inputs - before).toBe(250);
      expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(250);
      const pks = (await w.services.vectors.hashes(table.vectorstoreCollection, { limit: 1000 })).map((h) => Number(h.pk)).sort((a, b) => a - b);
      expect(pks).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
      const row = (await tableRow(w, table.id))!;
      expect(row.syncStatus).toBe("error");
      expect(row.lastError).toContain("VECSYNC_FREE_VECTOR_BUDGET");
    } finally {
      (w.services.config as { freeVectorBudget: number }).freeVectorBudget = 1_000_000;
    }
  });
});

