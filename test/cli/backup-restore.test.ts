// `vecsync backup` while the service serves, `vecsync restore` into a new data directory, and a
// service started there answering exactly as the original (docs/running.md#backup-and-restore):
// same ids, same scores. The restored directory gets no index files: the start rebuilds them.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, startProcess, tempDir, type TempDir } from "../harness.ts";
import { apiOf, eventuallyStatus, must, type Api } from "../e2e/helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "../e2e/postgres-world.ts";
import { PROBES } from "../e2e/source.ts";
import { oneLine, runCli } from "./cli.ts";

// Starts processes and databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(90_000);

let world: PgWorld;
let tableId: string;
let apiKey: string;
let scratch: TempDir;

beforeAll(async () => {
  world = await openPgWorld();
  apiKey = must(await world.api.call("POST", "/v1/api-keys", { name: "backup-test" }), 201).key;
  tableId = (await createAndBackfill(world, tableBody(world))).id;
  await eventuallyStatus(world.api, tableId, "synced", 30_000);
  scratch = tempDir();
});

afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
  scratch?.[Symbol.dispose]();
});

let backups = 0;
/** A fresh backup of the running service's data directory. */
async function backup(): Promise<string> {
  const file = join(scratch.path, `backup-${++backups}.db`);
  const run = await runCli(["backup", "--to", file, "--data-dir", world.proc.dataDir]);
  expect(run.code, run.stderr).toBe(0);
  return file;
}

const queries = PROBES.slice(0, 8).map((p) => p.body);

async function answers(api: Api): Promise<unknown[]> {
  const out = [];
  for (const body of queries) out.push(must(await api.call("POST", `/v1/vector-tables/${tableId}/query`, body), 200).results);
  return out;
}

function copyKeys(to: string): void {
  for (const key of ["master.key", "jwt.secret"]) copyFileSync(join(world.proc.dataDir, key), join(to, key));
}

describe("happy", () => {
  test("a backup taken while serving, restored into a new data dir, answers the same queries the same way", async () => {
    const before = await answers(world.api);
    expect((before[0] as unknown[]).length).toBeGreaterThan(0);
    // Keep the service writing while the copy is taken: a key made and revoked per round, each a
    // committed write (revoked, so the member's cap on unrevoked keys is never reached).
    let writing = true;
    const writes = (async () => {
      for (let i = 0; writing; i++) {
        const made = must(await world.api.call("POST", "/v1/api-keys", { name: `during-backup-${i}` }), 201);
        must(await world.api.call("DELETE", `/v1/api-keys/${made.api_key.id}`), 204);
      }
    })();
    const file = join(scratch.path, "online.db");
    const run = await runCli(["backup", "--to", file, "--data-dir", world.proc.dataDir]);
    writing = false;
    await writes;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`backup written: ${file}`);
    expect(run.stdout).toContain("1 organization(s), 1 vector table(s)");
    expect(run.stdout).toContain(`keep ${join(world.proc.dataDir, "master.key")} and ${join(world.proc.dataDir, "jwt.secret")} with the backup`);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    using target = tempDir();
    const restored = await runCli(["restore", "--from", file, "--data-dir", target.path]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored ${file} into ${join(target.path, "vecsync.db")}`);
    expect(restored.stdout).toContain(`copy master.key and jwt.secret kept with the backup into ${target.path}`);
    expect(statSync(join(target.path, "vecsync.db")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(target.path, "indexes"))).toBe(false);
    copyKeys(target.path);

    await using second = await startProcess({ dataDir: target.path });
    const api = apiOf(second.url, { authorization: `Bearer ${apiKey}` });
    // Ready means every served index is loaded: here, rebuilt from the database.
    await eventually(async () => (await fetch(`${second.url}/readyz`)).status === 200, 30_000, 100);
    expect(await answers(api)).toEqual(before);
    expect(must(await api.call("GET", `/v1/vector-tables/${tableId}`), 200)).toMatchObject({ sync_status: "synced", synced_rows: 300, total_rows: 300 });
    // The rebuilt index is checkpointed at shutdown like any other.
    expect(await second.stop("SIGTERM")).toBe(0);
    expect(readdirSync(join(target.path, "indexes")).length).toBeGreaterThan(0);
  });
});

describe("errors", () => {
  test("serve on a restored database without its master.key refuses with one line and generates no key", async () => {
    using target = tempDir();
    expect((await runCli(["restore", "--from", await backup(), "--data-dir", target.path])).code).toBe(0);
    const run = await runCli(["serve", "--port", "0", "--data-dir", target.path]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain(`vecsync: ${join(target.path, "master.key")} is missing but the database holds 1 credential(s) encrypted with a master key`);
    expect(existsSync(join(target.path, "master.key"))).toBe(false);
    // With the key in place it starts.
    copyKeys(target.path);
    await using started = await startProcess({ dataDir: target.path });
    expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
  });

  test("restore refuses the data dir of a running service, naming its pid", async () => {
    const run = await runCli(["restore", "--from", await backup(), "--data-dir", world.proc.dataDir]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain(`data directory ${world.proc.dataDir} is in use by process ${world.proc.proc.pid}`);
  });

  test("restore refuses a database that holds records, and leaves it as it was", async () => {
    using target = tempDir();
    const file = await backup();
    expect((await runCli(["restore", "--from", file, "--data-dir", target.path])).code).toBe(0);
    const db = readFileSync(join(target.path, "vecsync.db"));
    const run = await runCli(["restore", "--from", file, "--data-dir", target.path]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toMatch(/already holds a database with \d+ user and organization record\(s\); restore only into a new or empty data directory$/);
    expect(readFileSync(join(target.path, "vecsync.db")).equals(db)).toBe(true);
  });

  test("restore replaces a database with no records (a migrated, unused data dir)", async () => {
    using target = tempDir();
    expect((await runCli(["migrate", "--data-dir", target.path])).code).toBe(0);
    const run = await runCli(["restore", "--from", await backup(), "--data-dir", target.path]);
    expect(run.code, run.stderr).toBe(0);
    // The unused dir made its own master.key: the note says it must be the backup's.
    expect(run.stdout).toContain("the master key in place must be the one the backup was made with");
  });

  test("backup refuses an existing file and leaves it untouched", async () => {
    const file = join(scratch.path, "taken.db");
    writeFileSync(file, "keep me");
    const run = await runCli(["backup", "--to", file, "--data-dir", world.proc.dataDir]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toBe(`vecsync: ${file} already exists; a backup never overwrites a file`);
    expect(readFileSync(file, "utf8")).toBe("keep me");
  });

  test.each([
    [["backup", "--data-dir", "/nonexistent-vecsync"], "vecsync: --to FILE is required: where to write the backup"],
    [["restore"], "vecsync: --from FILE is required: the backup to restore"],
  ])("%p is refused with one line, exit 2", async (args, line) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toBe(line);
  });

  test("backup of a data dir without a database, and restore of a file that is not one, are refused", async () => {
    using empty = tempDir();
    const noDb = await runCli(["backup", "--to", join(scratch.path, "never.db"), "--data-dir", empty.path]);
    expect(noDb.code).toBe(2);
    expect(oneLine(noDb)).toBe(`vecsync: no database at ${join(empty.path, "vecsync.db")} (is --data-dir right?)`);
    const junk = join(scratch.path, "junk.db");
    writeFileSync(junk, "not a database at all, just text");
    const notDb = await runCli(["restore", "--from", junk, "--data-dir", join(empty.path, "new")]);
    expect(notDb.code).toBe(2);
    expect(oneLine(notDb)).toBe(`vecsync: ${junk} is not a SQLite database (a file written by vecsync backup)`);
  });
});
