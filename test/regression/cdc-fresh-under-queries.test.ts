// Regression (issue 42): a change stream starved under query traffic. Background work waited
// (up to 25 ms a step) while any request was in flight, and the sync engine's own steps did too,
// so two clients querying without pause held a cdc table to a trickle: minutes behind at 500
// changes/s. Sync is foreground work now (shared/foreground.ts). Not a timed test: a behaviour
// with generous bounds, that fails when changes stop arriving while queries go on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, expectedSet, storedTexts, streamingTable, tableRow, textsOf, type World } from "../domains/sync/world.ts";

const ROWS = 2_000;
const CHANGES_PER_SEC = 200;
const ROWS_PER_TXN = 10;
const SECONDS = 10;
const CLIENTS = 2;

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS });
  table = await streamingTable(w, 60_000);
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, table.id))!);
  await w.dispose();
});

const status = async () => json(await w.app.request("GET", `/v1/vector-tables/${table.id}/sync/status`, { headers: w.org.owner.key }));

describe("happy", () => {
  test(`${CHANGES_PER_SEC} changes/s for ${SECONDS} s beside ${CLIENTS} clients querying without pause: staleness stays under 5 s, every change applied within 5 s of the last`, async () => {
    let querying = true;
    let answered = 0;
    const clients = Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; querying; i++) {
        const res = await w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: w.org.owner.key, body: { query: `doc ${c} ${i}`, limit: 10 } });
        expect(res.status).toBe(200);
        answered++;
      }
    });
    let worst = 0;
    const watch = setInterval(() => void status().then((s) => (worst = Math.max(worst, s.staleness_secs))), 250);
    const txns = (CHANGES_PER_SEC / ROWS_PER_TXN) * SECONDS;
    const started = performance.now();
    for (let t = 0; t < txns; t++) {
      const from = (t * ROWS_PER_TXN) % ROWS;
      await w.sql`UPDATE docs SET body = ${`revision ${t}`} WHERE id > ${from} AND id <= ${from + ROWS_PER_TXN}`;
      const due = started + ((t + 1) * 1000 * ROWS_PER_TXN) / CHANGES_PER_SEC;
      if (due > performance.now()) await Bun.sleep(due - performance.now());
    }
    const lastCommit = performance.now();
    const expected = textsOf(await expectedSet(w.sql));
    await eventually(async () => {
      const stored = await storedTexts(w.services, table);
      return [...expected].every(([pk, text]) => stored.get(pk) === text);
    }, 60_000, 100);
    const caughtUpMs = performance.now() - lastCommit;
    querying = false;
    await Promise.all(clients);
    clearInterval(watch);
    expect(answered).toBeGreaterThan(50); // the clients did query throughout
    expect(caughtUpMs).toBeLessThan(5_000);
    expect(worst).toBeLessThan(5);
  }, 120_000);
});
