// Rows whose text renders empty are not in the collection but count as synced. They are recorded
// in the database (sync_empty_rows), not in process memory: after a restart a pass neither
// fetches them again nor forgets to count them, and they go with their table and organization.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deleteOrganizationData } from "../../../src/domains/organizations/deletion.ts";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { stopAllSync } from "../../../src/domains/sync/lifecycle.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { openVectorStore, type Services } from "../../../src/services.ts";
import { createLogger } from "../../../src/shared/log.ts";
import { buildServices } from "../../../src/wiring.ts";
import { COLUMNS, createWorld, enqueueFill, newVectorTable, tableRow, taskDone, updateTableRow, type World } from "./world.ts";

let w: World;
let restarted: Services | null = null;
beforeAll(async () => {
  w = await createWorld({ rows: 50 });
  await w.sql`UPDATE docs SET title = NULL, body = NULL WHERE id IN (3, 7)`;
  w.services.scheduler.start();
});
afterAll(async () => {
  if (restarted) {
    await restarted.vectors.close();
    restarted.database.close();
  }
  await w.dispose();
});

const emptyRowsOf = async (services: Services, tableId: string) =>
  (await services.database.client.execute({ sql: "SELECT pk FROM sync_empty_rows WHERE vector_table_id = ? ORDER BY pk", args: [tableId] })).rows.map((r) => String(r.pk));

async function backfilled(): Promise<VectorTableRow> {
  const table = await newVectorTable(w);
  await taskDone(w, (await enqueueFill(w, table)).id);
  expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", totalRows: 50, syncedRows: 50 });
  expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(48);
  expect(await emptyRowsOf(w.services, table.id)).toEqual(["3", "7"]);
  return table;
}

/** A new service over the same data dir, as after a restart of the process. */
async function restart(): Promise<Services> {
  await w.services.scheduler.stop();
  await stopAllSync(w.services);
  await w.services.vectors.close();
  w.services.database.close();
  const database = await openDatabase(w.app.config.databaseUrl);
  const logger = createLogger("silent");
  return buildServices(w.app.config, database, await openVectorStore(w.app.config, database, logger), logger);
}

describe("happy", () => {
  test("DELETE of the vector table removes its empty-text rows", async () => {
    const table = await backfilled();
    const res = await w.app.request("DELETE", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key });
    expect(res.status).toBe(204);
    expect(await emptyRowsOf(w.services, table.id)).toEqual([]);
  });

  test("a re-backfill whose columns render other rows empty: the new generation's empty rows replace the old ones", async () => {
    const table = await backfilled();
    await w.sql`UPDATE docs SET title = NULL WHERE id = 11`; // has a body: empty only when title alone is embedded
    try {
      const columns = COLUMNS.filter((c) => c.name !== "body");
      await updateTableRow(w, table.id, { columns, configVersion: 2, syncStatus: "pending_rebackfill" });
      await taskDone(w, (await enqueueFill(w, table, "rebackfill")).id);
      expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", totalRows: 50, syncedRows: 50 });
      expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(47);
      expect(await emptyRowsOf(w.services, table.id)).toEqual(["11", "3", "7"]);
    } finally {
      await w.sql`UPDATE docs SET title = 'title 11' WHERE id = 11`;
    }
  });

  test("after a restart a pass fetches no empty row again and still counts them; text and deletion clear them", async () => {
    const table = await backfilled();
    restarted = await restart();
    const again = (await runBatchPass(restarted, table.id))!;
    expect(again.counts).toMatchObject({ empty: 0, unchanged: 50, embedded: 0 });
    expect(await tableRow({ ...w, services: restarted }, table.id)).toMatchObject({ totalRows: 50, syncedRows: 50, rowsPending: 0 });

    await w.sql`UPDATE docs SET title = 'has text now' WHERE id = 3`;
    await w.sql`DELETE FROM docs WHERE id = 7`;
    const changed = (await runBatchPass(restarted, table.id))!;
    expect(changed.counts).toMatchObject({ embedded: 1 });
    expect(await emptyRowsOf(restarted, table.id)).toEqual([]);
    expect(await restarted.vectors.count(table.vectorstoreCollection)).toBe(49);
    expect(await tableRow({ ...w, services: restarted }, table.id)).toMatchObject({ totalRows: 49, syncedRows: 49 });
  });

  test("deleting the organization removes its tables' empty-text rows", async () => {
    const services = restarted!;
    await w.sql`UPDATE docs SET title = NULL, body = NULL WHERE id = 9`;
    const tables = (await services.database.client.execute({ sql: "SELECT id FROM vector_tables WHERE org_id = ?", args: [w.org.id] })).rows.map((r) => String(r.id));
    for (const id of tables) await runBatchPass(services, id);
    expect(tables).toHaveLength(2);
    expect(await Promise.all(tables.map((id) => emptyRowsOf(services, id)))).toEqual([["9"], ["9"]]);
    await deleteOrganizationData(services, w.org.id);
    expect((await services.database.client.execute("SELECT count(*) AS n FROM sync_empty_rows")).rows[0]!.n).toBe(0);
  });
});
