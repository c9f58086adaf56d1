// Regression (issue 42, back-pressure that tells the truth): a cdc table whose consumer was held
// up read `synced`, rows_pending 10 while it was 40 s behind: rows_pending counted only the batch
// being applied. Now it counts the keys the stream has decoded behind that batch too, follows
// them while the batch takes long, and /metrics names the bytes of WAL past the applied position.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, streamingTable, tableRow, type World } from "../domains/sync/world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 100 });
  table = await streamingTable(w, 60_000);
});
afterAll(async () => {
  w.fake.set({ latencyMs: 0 });
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

const status = async () => json(await w.app.request("GET", `/v1/vector-tables/${table.id}/sync/status`, { headers: w.org.owner.key }));

async function lagBytes(): Promise<number | null> {
  const text = await (await w.app.request("GET", "/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith("vecsync_vector_table_source_lag_bytes{") && l.includes(`vector_table_id="${table.id}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : null;
}

describe("happy", () => {
  test("a slow provider holds one batch: the 10 transactions behind it count as pending, and the WAL behind it as bytes; 0 once applied", async () => {
    // The stream runs and has caught up: a change goes through, nothing is pending.
    await w.sql`UPDATE docs SET body = 'warm' WHERE id = 100`;
    await eventually(async () => (await status()).rows_pending === 0 && (await tableRow(w, table.id))!.sourceLagBytes !== null, 20_000, 50);
    w.fake.set({ latencyMs: 4_000 });
    await w.sql`UPDATE docs SET body = 'first while slow' WHERE id <= 5`;
    // The first batch is being applied (its embedding waits 4 s) before the rest commit.
    await eventually(async () => (await status()).rows_pending >= 5, 10_000, 20);
    for (let t = 0; t < 10; t++) await w.sql`UPDATE docs SET body = ${`then ${t}`} WHERE id > ${10 + t * 5} AND id <= ${15 + t * 5}`;
    const behind = await eventually(async () => {
      const s = await status();
      return s.rows_pending >= 55 && s;
    }, 10_000, 50);
    expect(behind.sync_status).toBe("synced");
    expect(behind.staleness_secs).toBeGreaterThanOrEqual(0);
    expect(await lagBytes()).toBeGreaterThan(0);

    w.fake.set({ latencyMs: 0 });
    await eventually(async () => {
      const s = await status();
      return s.rows_pending === 0 && s.staleness_secs === 0;
    }, 30_000, 50);
    const row = (await tableRow(w, table.id))!;
    expect(row.syncedRows).toBe(100);
  }, 90_000);
});
