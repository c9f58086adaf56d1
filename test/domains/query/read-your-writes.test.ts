// Read-your-writes on the query endpoint (docs/vector-tables.md#read-your-writes): `synced_through`
// on every answer, and `min_synced_through` + `wait_ms` holding a query until the table has applied
// the source that far (else 409 sync_behind), against a real Postgres source: a cdc table counting in
// WAL positions and a batch table counting in time.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { eventually } from "../../harness.ts";
import { json } from "../../helpers/organizations.ts";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import { syncState } from "../../../src/domains/sync/state.ts";
import { announceProgress, armProgress } from "../../../src/domains/vector-tables/progress-signal.ts";
import { formatLsn, parseLsn, parseTime, reached } from "../../../src/domains/vector-tables/synced-through.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { createWorld, enqueueFill, insertDocs, newVectorTable, tableRow, taskDone, type World } from "../sync/world.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

let w: World;
let cdc: VectorTableRow;
let batch: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 20 });
  w.services.scheduler.start();
  cdc = await newVectorTable(w, { syncMode: "cdc" });
  batch = await newVectorTable(w);
  const tasks = [await enqueueFill(w, cdc), await enqueueFill(w, batch)];
  for (const task of tasks) await taskDone(w, task.id);
  await eventually(() => syncState(w.services).consumers.has(cdc.id), 3_000);
  await w.sql`CREATE TABLE unrelated (id serial PRIMARY KEY, note text)`;
});
afterAll(async () => {
  await stopSyncFor(w.services, (await tableRow(w, cdc.id))!);
  await w.dispose();
});

const ask = (table: { id: string }, body: Record<string, unknown> = {}) =>
  w.app.request("POST", `/v1/vector-tables/${table.id}/query`, { headers: w.org.owner.key, body: { query: "row", limit: 100, ...body } });
const currentLsn = async (): Promise<string> => (await w.sql<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!.lsn;
const ids = (answer: { results: { id: string }[] }) => answer.results.map((r) => r.id);
const LSN_TEXT = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

describe("happy", () => {
  test("a cdc table on Postgres answers the LSN its stream applied; a batch table the start of its last pass", async () => {
    const c = await json(await ask(cdc));
    expect(c.synced_through).toMatch(LSN_TEXT);
    expect(parseLsn(c.synced_through)! <= parseLsn((await tableRow(w, cdc.id))!.cdcCheckpoint!)!).toBe(true); // the row read later
    const b = await json(await ask(batch));
    expect(b.synced_through).toBe((await tableRow(w, batch.id))!.lastSyncStartedAt);
    expect(Object.keys(b).sort()).toEqual(["model", "query", "results", "synced_through", "total_results"]);
  });

  test("a row committed, then asked for at pg_current_wal_lsn(), is in the answer", async () => {
    await insertDocs(w.sql, 1001, 1001);
    const lsn = await currentLsn();
    const res = await ask(cdc, { min_synced_through: lsn, wait_ms: 2_000 });
    const answer = await json(res);
    expect([res.status, answer.error]).toEqual([200, undefined]);
    expect(ids(answer)).toContain("1001");
    expect(parseLsn(answer.synced_through)! >= parseLsn(lsn)!).toBe(true);
  });

  test("WAL of tables it does not sync moves the position too: an idle table catches up", async () => {
    // Several commits in a row, each right after the last position was stored: closer than the
    // feed's one-second spacing of positions (test/regression/cdc-position-held-back.test.ts).
    for (let i = 0; i < 4; i++) {
      await w.sql`INSERT INTO unrelated (note) VALUES ('elsewhere')`;
      const lsn = await currentLsn();
      const res = await ask(cdc, { min_synced_through: lsn, wait_ms: 2_000 });
      const answer = await json(res);
      expect([res.status, answer.error]).toEqual([200, undefined]);
      expect(parseLsn(answer.synced_through)! >= parseLsn(lsn)!).toBe(true);
    }
  });

  test("tRPC query.search takes the same fields and answers synced_through", async () => {
    await insertDocs(w.sql, 1002, 1002);
    const lsn = await currentLsn();
    const res = await w.app.request("POST", "/trpc/query.search", { headers: w.org.owner.key, body: { vector_table_id: cdc.id, query: "row", limit: 100, min_synced_through: lsn, wait_ms: 2_000 } });
    expect(res.status).toBe(200);
    const answer = (await json(res)).result.data;
    expect(ids(answer)).toContain("1002");
    expect(answer.synced_through).toMatch(LSN_TEXT);
  });

  test("batch: a time already passed answers at once; a pass started after it ends the wait", async () => {
    expect((await ask(batch, { min_synced_through: "2000-01-01T00:00:00Z", wait_ms: 0 })).status).toBe(200);
    const min = new Date().toISOString();
    await insertDocs(w.sql, 1003, 1003);
    const answered = ask(batch, { min_synced_through: min, wait_ms: 20_000 });
    await runBatchPass(w.services, batch.id);
    const answer = await json(await answered);
    expect(ids(answer)).toContain("1003");
    expect(Date.parse(answer.synced_through)).toBeGreaterThanOrEqual(Date.parse(min));
  });

  test("a completed pass, and the stream storing its position, wake the waiters at once (no poll needed)", async () => {
    const pass = armProgress(batch.id, 20_000);
    const started = performance.now();
    await runBatchPass(w.services, batch.id);
    await pass.fired;
    pass.disarm();
    const stream = armProgress(cdc.id, 20_000);
    await insertDocs(w.sql, 1004, 1004);
    await stream.fired;
    stream.disarm();
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe("errors", () => {
  test("an LSN the table has not reached within wait_ms → 409 sync_behind with details.synced_through", async () => {
    const started = performance.now();
    const res = await ask(cdc, { min_synced_through: "FFFFFFFF/0", wait_ms: 300 });
    const body = await json(res);
    expect([res.status, body.error.code]).toEqual([409, "sync_behind"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(body.error.details.synced_through).toMatch(LSN_TEXT);
    expect(body.error.details.synced_through).toBe(formatLsn(parseLsn((await tableRow(w, cdc.id))!.cdcCheckpoint!)!));
  });

  test("batch: a time in the future → 409 after the wait, with the time reached", async () => {
    const started = performance.now();
    const res = await ask(batch, { min_synced_through: new Date(Date.now() + 3_600_000).toISOString(), wait_ms: 300 });
    const body = await json(res);
    expect([res.status, body.error.code]).toEqual([409, "sync_behind"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(body.error.details.synced_through).toBe((await tableRow(w, batch.id))!.lastSyncStartedAt);
  });

  test("wait_ms 0 answers at once; a table never filled has synced through nothing (null)", async () => {
    const res = await ask(cdc, { min_synced_through: "FFFFFFFF/0" });
    expect(res.status).toBe(409);
    const pending = await newVectorTable(w, { syncMode: "cdc" });
    const body = await json(await ask(pending, { min_synced_through: "0/1", wait_ms: 50 }));
    expect(body.error).toMatchObject({ code: "sync_behind", details: { synced_through: null } });
  });

  const bad = async (table: { id: string }, body: Record<string, unknown>) => {
    const res = await ask(table, body);
    const e = (await json(res)).error;
    return { status: res.status, code: e?.code, paths: e?.details?.map((d: { path: string }) => d.path) };
  };
  const refused = (path: string) => ({ status: 400, code: "validation_error", paths: [path] });

  test.each([
    ["an ISO time on a cdc table on Postgres", "cdc", { min_synced_through: "2026-01-01T00:00:00Z" }, "min_synced_through"],
    ["an LSN on a batch table", "batch", { min_synced_through: "0/16B3748" }, "min_synced_through"],
    ["a time without an offset", "batch", { min_synced_through: "2026-01-01T00:00:00" }, "min_synced_through"],
    ["a day that does not exist", "batch", { min_synced_through: "2026-02-30T00:00:00Z" }, "min_synced_through"],
    ["words", "batch", { min_synced_through: "yesterday" }, "min_synced_through"],
    ["an LSN with a third part", "cdc", { min_synced_through: "0/16B3748/1" }, "min_synced_through"],
    ["an LSN half over 32 bits", "cdc", { min_synced_through: "0/123456789" }, "min_synced_through"],
    ["a number", "cdc", { min_synced_through: 42 }, "min_synced_through"],
    ["wait_ms over 30000", "cdc", { min_synced_through: "0/1", wait_ms: 30_001 }, "wait_ms"],
    ["wait_ms negative", "batch", { wait_ms: -1 }, "wait_ms"],
    ["wait_ms not whole", "batch", { wait_ms: 2.5 }, "wait_ms"],
  ] as const)("%s → 400 validation_error", async (_, which, body, path) => {
    expect(await bad(which === "cdc" ? cdc : batch, body)).toEqual(refused(path));
  });
});

describe("positions", () => {
  test("LSNs compare as numbers, not as text", () => {
    expect(reached("lsn", "0/10", parseLsn("0/9")!)).toBe(true);
    expect(reached("lsn", "0/9", parseLsn("0/10")!)).toBe(false);
    expect(reached("lsn", "1/0", parseLsn("0/FFFFFFFF")!)).toBe(true);
    expect(reached("lsn", "0/A", parseLsn("0/0000000a")!)).toBe(true);
    expect(reached("lsn", null, 0n)).toBe(false);
    expect(formatLsn(parseLsn("00000001/016b3748")!)).toBe("1/16B3748");
  });

  test("times compare as instants; digits past the millisecond round the bound up", () => {
    expect(parseTime("2026-01-01T02:00:00+02:00")).toBe(Date.UTC(2026, 0, 1));
    expect(parseTime("2026-01-01T00:00:00.0001Z")).toBe(Date.UTC(2026, 0, 1) + 1);
    expect(reached("time", "2026-01-01T00:00:00.000Z", parseTime("2026-01-01T00:00:00.0001Z")!)).toBe(false);
    expect(reached("time", "2026-01-01T00:00:00.001Z", parseTime("2025-12-31T23:00:00.001-01:00")!)).toBe(true);
  });

  test("an announcement wakes only the waiters of its table; disarmed waiters are forgotten", async () => {
    const mine = armProgress("table-a", 10_000);
    const other = armProgress("table-b", 50);
    announceProgress("table-a");
    await mine.fired;
    await other.fired; // by its timeout
    mine.disarm();
    other.disarm();
  });
});
