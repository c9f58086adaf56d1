// The sync history's store and its API, without a source (docs/vector-tables.md#sync-history): entries
// written through the seam (startPass/finishPass) and the stream's minutes (StreamHistory), the
// 1,000-entry cap, stale `running` entries, pagination newest first, and what deletions remove.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { environments } from "../../../src/domains/environments/tables.ts";
import { startPass, finishPass, HISTORY_KEEP } from "../../../src/domains/sync/history.ts";
import { insertPass } from "../../../src/domains/sync/repo.ts";
import { StreamHistory } from "../../../src/domains/sync/stream-history.ts";
import { collectionName } from "../../../src/domains/vector-tables/render.ts";
import { insertVectorTable } from "../../../src/domains/vector-tables/repo.ts";
import { FakeClock } from "../../../src/shared/clock.ts";
import { newId } from "../../../src/shared/ids.ts";
import { createTestApp, eventually, type TestApp } from "../../harness.ts";
import { json, newOrganization, readOnlyKey, type Bearer, type TestOrg } from "../../helpers/organizations.ts";

const clock = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0));
let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await newOrganization(app);
});
afterAll(() => app[Symbol.asyncDispose]());

/** A synced vector table row with an empty collection (nothing here reads a source). */
async function table(orgId = org.id): Promise<{ id: string; orgId: string }> {
  const id = newId();
  const now = clock.now().toISOString();
  const name = `t${id.slice(0, 6)}`;
  const collection = collectionName(id, name);
  const [env] = await app.services.database.db.select().from(environments).where(eq(environments.orgId, orgId));
  await insertVectorTable(app.services.database.db, {
    id, orgId, environmentId: env!.id, connectionId: newId(), embeddingProviderId: null, name, sourceTable: "docs", primaryKeyColumn: "id",
    columns: [{ name: "body", role: "embedding" }], embeddingModel: "local-lexical-v1", embeddingDimensions: 16, mode: "managed", syncMode: "batch",
    syncStatus: "synced", vectorstoreCollection: collection, numericPk: true, createdAt: now, updatedAt: now,
  });
  await app.services.vectors.createCollection(collection, { dimensions: 16, metadata: [], numericPk: true });
  return { id, orgId };
}

const history = async (tableId: string, query = "", key: Bearer = org.owner.key) => app.request("GET", `/v1/vector-tables/${tableId}/sync/history${query}`, { headers: key });

const count = async (where: string, args: string[]) => Number((await app.services.database.client.execute({ sql: `SELECT count(*) AS n FROM sync_passes WHERE ${where}`, args })).rows[0]!.n);

describe("happy", () => {
  test("an entry through the seam: running while it runs, then its counts, status and end", async () => {
    const t = await table();
    const pass = await startPass(app.services, t, "batch");
    const running = (await json(await history(t.id))).data;
    expect(running).toEqual([
      { id: pass.id, vector_table_id: t.id, kind: "batch", status: "running", started_at: clock.now().toISOString(), finished_at: null, rows_scanned: 0, rows_embedded: 0, rows_metadata_only: 0, rows_deleted: 0, rows_unchanged: 0, tokens: 0, error: null },
    ]);
    clock.advance(1500);
    Object.assign(pass.totals, { scanned: 10, embedded: 2, metadataOnly: 3, deleted: 1, unchanged: 4, tokens: 77 });
    await finishPass(app.services, pass, { ok: true });
    const [done] = (await json(await history(t.id))).data;
    expect(done).toMatchObject({ status: "completed", finished_at: clock.now().toISOString(), rows_scanned: 10, rows_embedded: 2, rows_metadata_only: 3, rows_deleted: 1, rows_unchanged: 4, tokens: 77, error: null });

    const failing = await startPass(app.services, t, "batch");
    await finishPass(app.services, failing, { ok: false, error: new Error("emb_a text-embedding-3-small: 401: Incorrect API key provided") });
    const [failed] = (await json(await history(t.id))).data;
    expect(failed).toMatchObject({ id: failing.id, status: "failed", error: "emb_a text-embedding-3-small: 401: Incorrect API key provided" });
  });

  test("pages newest first across more entries than a page: none repeated, none missed", async () => {
    const t = await table();
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) {
      // Two entries per clock tick: the id breaks the tie, as the cursor does.
      if (i % 2 === 0) clock.advance(1000);
      const pass = await startPass(app.services, t, "batch");
      await finishPass(app.services, pass, { ok: true });
      ids.push(pass.id);
    }
    const seen: { id: string; started_at: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await history(t.id, `?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const page = await json(res);
      expect(page.pagination.limit).toBe(10);
      seen.push(...page.data);
      cursor = page.pagination.next_cursor;
      expect(page.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(5);
    expect(new Set(seen.map((e) => e.id))).toEqual(new Set(ids));
    const order = [...seen].sort((a, b) => (a.started_at === b.started_at ? (a.id < b.id ? 1 : -1) : a.started_at < b.started_at ? 1 : -1));
    expect(seen.map((e) => e.id)).toEqual(order.map((e) => e.id));
    expect(seen[0]!.started_at >= seen.at(-1)!.started_at).toBe(true);
    // The default page is 20.
    expect((await json(await history(t.id))).data).toHaveLength(20);
  });

  test("any key may read it (read_only included)", async () => {
    const t = await table();
    await finishPass(app.services, await startPass(app.services, t, "batch"), { ok: true });
    const res = await history(t.id, "", await readOnlyKey(app, org.owner));
    expect(res.status).toBe(200);
    expect((await json(res)).data).toHaveLength(1);
  });

  test("keeps the newest 1,000 entries of a table: the oldest go as new ones come; other tables keep theirs", async () => {
    const [t, other] = [await table(), await table()];
    await finishPass(app.services, await startPass(app.services, other, "batch"), { ok: true });
    const base = Date.UTC(2026, 0, 1);
    const rows = Array.from({ length: HISTORY_KEEP }, (_, i) => ({
      id: newId(), vectorTableId: t.id, orgId: t.orgId, kind: "batch" as const, status: "completed" as const,
      startedAt: new Date(base + i * 60_000).toISOString(), finishedAt: new Date(base + i * 60_000 + 500).toISOString(),
      rowsScanned: i, rowsEmbedded: 0, rowsMetadataOnly: 0, rowsDeleted: 0, rowsUnchanged: i, tokens: 0, error: null,
    }));
    for (let i = 0; i < rows.length; i += 200) await app.services.database.db.transaction(async (tx) => { for (const r of rows.slice(i, i + 200)) await insertPass(tx, r); });
    expect(await count("vector_table_id = ?", [t.id])).toBe(HISTORY_KEEP);

    const newest = await startPass(app.services, t, "batch");
    await finishPass(app.services, newest, { ok: true });
    expect(await count("vector_table_id = ?", [t.id])).toBe(HISTORY_KEEP);
    expect(await count("id = ?", [rows[0]!.id])).toBe(0);
    expect(await count("id = ?", [rows[1]!.id])).toBe(1);
    expect(await count("id = ?", [newest.id])).toBe(1);
    expect(await count("vector_table_id = ?", [other.id])).toBe(1);

    const again = await startPass(app.services, t, "reconcile");
    expect(await count("vector_table_id = ?", [t.id])).toBe(HISTORY_KEEP);
    expect(await count("id = ?", [rows[1]!.id])).toBe(0);
    await finishPass(app.services, again, { ok: true });
  });

  test("an entry left running by a process that died is closed as failed when the next pass of its family starts", async () => {
    const t = await table();
    const fill = await startPass(app.services, t, "backfill");
    const batch = await startPass(app.services, t, "batch");
    await startPass(app.services, t, "cdc"); // a stream's minute closes nothing
    const byId = async () => new Map<string, any>((await json(await history(t.id))).data.map((e: any) => [e.id, e]));
    expect((await byId()).get(fill.id).status).toBe("running");
    expect((await byId()).get(batch.id).status).toBe("running");

    const reconcile = await startPass(app.services, t, "reconcile");
    const afterReconcile = await byId();
    const closed = afterReconcile.get(batch.id);
    expect([closed.status, closed.finished_at]).toEqual(["failed", clock.now().toISOString()]);
    expect(closed.error).toBe(`interrupted: the process running this pass stopped before it finished; pass ${reconcile.id} started after it`);
    expect(afterReconcile.get(fill.id).status).toBe("running");

    const resumed = await startPass(app.services, t, "rebackfill");
    const dead = (await byId()).get(fill.id);
    expect([dead.status, dead.error]).toEqual(["failed", `interrupted: the process running this pass stopped before it finished; pass ${resumed.id} started after it`]);
    // A closed entry keeps the way it ended: a late finish of the dead pass changes nothing.
    await finishPass(app.services, fill, { ok: true });
    expect((await byId()).get(fill.id).status).toBe("failed");
    await finishPass(app.services, resumed, { ok: true });
    expect((await byId()).get(resumed.id).status).toBe("completed");
  });
});

describe("the change stream's minutes", () => {
  const applied = (embedded: number, metadata: number, deleted: number, rows: number) => ({ counts: { embedded, reused: 0, metadata, deleted, empty: 0, unchanged: rows - embedded - metadata - deleted }, rows });

  test("one entry per minute with activity, written once the minute is over, never per change", async () => {
    clock.advance(60_000 - (clock.now().getTime() % 60_000) + 5_000); // hh:mm:05
    const firstApplied = clock.now().toISOString();
    const t = await table();
    const stream = new StreamHistory(app.services, t);
    stream.applied(applied(2, 1, 0, 3), 40);
    clock.advance(20_000);
    stream.applied(applied(1, 0, 1, 2), 15);
    await stream.flush();
    expect((await json(await history(t.id))).data).toEqual([]); // the minute is not over

    clock.advance(40_000); // the next minute
    stream.applied(applied(0, 2, 0, 2), 0);
    await stream.flush();
    const [first, ...rest] = (await json(await history(t.id))).data;
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ kind: "cdc", status: "completed", started_at: firstApplied, rows_scanned: 5, rows_embedded: 3, rows_metadata_only: 1, rows_deleted: 1, rows_unchanged: 0, tokens: 55, error: null });

    // A failure in a minute makes its entry failed, with the last error; close() writes the current minute.
    stream.failed(new Error("emb_a: 503 Service Unavailable"), 0);
    await stream.close();
    const [second] = (await json(await history(t.id))).data;
    expect(second).toMatchObject({ kind: "cdc", status: "failed", rows_metadata_only: 2, error: "emb_a: 503 Service Unavailable" });
    // After the last flush nothing more is written.
    stream.applied(applied(1, 0, 0, 1), 5);
    clock.advance(60_000);
    await stream.flush();
    expect((await json(await history(t.id))).data).toHaveLength(2);
  });

  test("a minute without activity writes nothing", async () => {
    const t = await table();
    const stream = new StreamHistory(app.services, t);
    clock.advance(120_000);
    await stream.flush();
    await stream.close();
    expect((await json(await history(t.id))).data).toEqual([]);
  });
});

describe("errors", () => {
  test("an unknown table, or another organization's, is 404", async () => {
    const other = await newOrganization(app);
    const theirs = await table(other.id);
    await finishPass(app.services, await startPass(app.services, theirs, "batch"), { ok: true });
    for (const res of [await history(newId()), await history(theirs.id)]) {
      expect(res.status).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
    }
  });

  test.each([["?limit=0"], ["?limit=101"], ["?limit=ten"], ["?cursor=forged"]])("%s → 400 validation_error", async (query) => {
    const t = await table();
    const res = await history(t.id, query);
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("validation_error");
  });

  test("a cursor of another table's history is refused", async () => {
    const [a, b] = [await table(), await table()];
    for (let i = 0; i < 3; i++) await finishPass(app.services, await startPass(app.services, a, "batch"), { ok: true });
    const { pagination } = await json(await history(a.id, "?limit=1"));
    const res = await history(b.id, `?cursor=${encodeURIComponent(pagination.next_cursor)}`);
    expect(res.status).toBe(400);
  });

  test("no credential or a JWT → 401", async () => {
    const t = await table();
    expect((await app.request("GET", `/v1/vector-tables/${t.id}/sync/history`)).status).toBe(401);
    expect((await history(t.id, "", org.owner.jwt)).status).toBe(401);
  });
});

describe("deletion", () => {
  test("the history goes with its vector table, and with its organization", async () => {
    const doomed = await newOrganization(app);
    const [kept, deleted, inOrg] = [await table(), await table(), await table(doomed.id)];
    for (const t of [kept, deleted, inOrg]) await finishPass(app.services, await startPass(app.services, t, "batch"), { ok: true });

    expect((await app.request("DELETE", `/v1/vector-tables/${deleted.id}`, { headers: org.owner.key })).status).toBe(204);
    expect(await count("vector_table_id = ?", [deleted.id])).toBe(0);
    expect(await count("vector_table_id = ?", [kept.id])).toBe(1);

    app.services.scheduler.start();
    expect((await app.request("DELETE", `/v1/organizations/${doomed.id}`, { headers: doomed.owner.jwt })).status).toBe(202);
    await eventually(async () => (await app.request("GET", `/v1/organizations/${doomed.id}`, { headers: doomed.owner.jwt })).status === 404, 15_000);
    expect(await count("org_id = ?", [doomed.id])).toBe(0);
    // Kept, and the running scheduler may have added a pass of its own meanwhile.
    expect(await count("vector_table_id = ?", [kept.id])).toBeGreaterThanOrEqual(1);
  });
});
