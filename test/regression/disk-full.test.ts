// Issue 12 (item 7): with the data dir on a full disk, writes answered 500 `internal`, and with the
// log on the same disk the process exited and crash-looped on every start. docs/api.md#errors: writes answer
// 507 `storage_full`, reads keep answering, logging never kills the process, and the service
// recovers by itself once space returns. A real full filesystem: a small tmpfs (test/helpers).
import { expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, PG_ADMIN_URL, startProcess, tempDir, throwawayPostgres, type RunningProcess } from "../harness.ts";
import { apiOf, eventuallyStatus, must, signUp, type Api } from "../e2e/helpers.ts";
import { COLUMNS, seedRows } from "../e2e/source.ts";
import { mountSmallDisk } from "../helpers/small-disk.ts";

setDefaultTimeout(60_000);

// Info level: every request writes an access-log line to the full disk.
const onDisk = (dataDir: string) => ({ dataDir, stderrTo: join(dataDir, "vecsync.log"), env: { VECSYNC_LOG_LEVEL: "info" } });

async function expectStorageFull(api: Api, key: string, url: string) {
  const rest = await api.call("POST", "/v1/api-keys", { name: "while-full", permission: "full" });
  expect(rest.status).toBe(507);
  expect(rest.body.error.code).toBe("storage_full");
  const rpc = await fetch(`${url}/trpc/apiKeys.create`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ name: "while-full-rpc", permission: "full" }),
  });
  expect(rpc.status).toBe(507);
  expect(((await rpc.json()) as any).error.data.vecsync.code).toBe("storage_full");
}

async function expectReads(proc: RunningProcess, api: Api) {
  expect((await api.call("GET", "/v1/api-keys")).status).toBe(200);
  expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
  expect(proc.proc.exitCode).toBeNull();
}

test("full disk: writes 507, reads 200, the process lives, restarts and recovers when space returns", async () => {
  using disk = mountSmallDisk(16);
  let key: string;
  {
    await using first = await startProcess(onDisk(disk.path));
    const { api: signedUp } = await signUp(first);
    key = must(await signedUp.call("POST", "/v1/api-keys", { name: "test", permission: "full" }), 201).key;
    const api = apiOf(first.url, { authorization: `Bearer ${key}` });
    disk.fill();
    await expectStorageFull(api, key, first.url);
    await expectReads(first, api);
    expect(await first.stop("SIGTERM")).toBe(0); // shutdown's checkpoint fails quietly
  }
  // Still full: the next start must serve, not crash (a supervisor would restart it in a loop).
  await using second = await startProcess(onDisk(disk.path));
  const api = apiOf(second.url, { authorization: `Bearer ${key}` });
  await expectReads(second, api);
  await expectStorageFull(api, key, second.url);
  disk.free();
  must(await api.call("POST", "/v1/api-keys", { name: "after", permission: "full" }), 201);
  expect((await api.call("GET", "/v1/api-keys")).body.data.map((k: { name: string }) => k.name)).toContain("after");
});

/** Signs up on a fresh process, then stops it and closes the database as a last clean close does. */
async function keyThenCleanClose(dataDir: string): Promise<string> {
  let key: string;
  {
    await using first = await startProcess(onDisk(dataDir));
    const { api } = await signUp(first);
    key = must(await api.call("POST", "/v1/api-keys", { name: "test", permission: "full" }), 201).key;
    expect(await first.stop("SIGTERM")).toBe(0);
  }
  // The last connection to close checkpoints and deletes -wal and -shm (as sqlite3 or a restore
  // leaves a database). Opening it again means writing a new 32 KiB -shm index first.
  const db = new Database(join(dataDir, "vecsync.db"));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  expect(existsSync(join(dataDir, "vecsync.db-shm"))).toBe(false);
  return key;
}

test("full disk after a clean close (no -shm left): the start still serves reads, then recovers", async () => {
  using disk = mountSmallDisk(32); // room for the ballast the first start lays down
  const key = await keyThenCleanClose(disk.path);
  disk.fill();
  await using second = await startProcess(onDisk(disk.path));
  const api = apiOf(second.url, { authorization: `Bearer ${key}` });
  await expectReads(second, api);
  disk.fill(); // the room the start freed is soon taken too
  await expectStorageFull(api, key, second.url);
  disk.free();
  must(await api.call("POST", "/v1/api-keys", { name: "after", permission: "full" }), 201);
});

test("no room even to open the database (no ballast): the start waits, says why, and serves once space returns", async () => {
  using disk = mountSmallDisk(12); // too small for a ballast to be laid down
  const key = await keyThenCleanClose(disk.path);
  disk.fill();
  using logDir = tempDir(); // the log elsewhere, so that the wait can be seen
  const log = join(logDir.path, "vecsync.log");
  const starting = startProcess({ dataDir: disk.path, stderrTo: log, timeoutMs: 40_000 });
  await eventually(() => existsSync(log) && readFileSync(log, "utf8").includes("the data directory's disk is full"), 20_000);
  disk.free();
  await using second = await starting;
  const api = apiOf(second.url, { authorization: `Bearer ${key}` });
  await expectReads(second, api);
  must(await api.call("POST", "/v1/api-keys", { name: "after", permission: "full" }), 201);
});

test("a synced vector table on a full disk: queries answer, and the sync catches up by itself once space returns", async () => {
  using disk = mountSmallDisk(32);
  await using pg = await throwawayPostgres();
  await pg.sql`CREATE TABLE docs (id integer PRIMARY KEY, title text, body text, category varchar(40), price double precision, stock integer, active boolean, code text)`;
  await pg.sql`INSERT INTO docs ${pg.sql(seedRows())}`;
  await using proc = await startProcess({ ...onDisk(disk.path), env: { VECSYNC_LOG_LEVEL: "info", VECSYNC_SYNC_INTERVAL: "1" } });
  const { api } = await signUp(proc);
  const admin = new URL(PG_ADMIN_URL);
  const credentials = { host: "127.0.0.1", port: Number(admin.port || 5432), database: pg.name, user: admin.username || "postgres", password: "unused", ssl_mode: "disable" };
  const connection = must(await api.call("POST", "/v1/providers/db_relational/connections", { name: "source", mode: "managed", credentials }), 201);
  const provider = must(await api.call("POST", "/v1/embedding-providers", { name: "local", provider: "local" }), 201);
  const table = must(await api.call("POST", "/v1/vector-tables", { name: "docs", connection_id: connection.id, embedding_provider_id: provider.id, source_table: "docs", primary_key_column: "id", columns: COLUMNS, embedding_model: "local-lexical-v1", embedding_dimensions: 64, sync_mode: "batch" }), 201);
  must(await api.call("POST", `/v1/vector-tables/${table.id}/backfill`), 200);
  await eventuallyStatus(api, table.id, "synced");

  disk.fill();
  await pg.sql`INSERT INTO docs VALUES (1000, 'zebra quasar lantern', 'a brand new row', 'travel', 12.5, 7, true, 'r1000')`;
  const top = async () => must(await api.call("POST", `/v1/vector-tables/${table.id}/query`, { query: "zebra quasar lantern", limit: 1 }), 200).results[0]?.id;
  // A few passes come and go while the disk is full; the query keeps answering from what is stored.
  const before = Date.parse(must(await api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200).last_sync_at);
  await eventually(async () => (await api.call("GET", `/v1/vector-tables/${table.id}/sync/status`)).body.staleness_secs >= 3, 20_000);
  expect(await top()).not.toBe("1000");
  expect(proc.proc.exitCode).toBeNull();

  disk.free();
  await eventually(async () => (await top()) === "1000", 20_000);
  // The pass that stored the row records its completion just after: wait for that, not a moment.
  await eventually(async () => Date.parse(must(await api.call("GET", `/v1/vector-tables/${table.id}/sync/status`), 200).last_sync_at) > before, 20_000);
});
