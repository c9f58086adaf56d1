// `vecsync status` and `vecsync tasks` (no --watch) against a real service process: a Postgres
// source of 300 rows backfilled through the API, then read back through the CLI.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { eventuallyStatus, must } from "../e2e/helpers.ts";
import { createAndBackfill, openPgWorld, tableBody, type PgWorld } from "../e2e/postgres-world.ts";
import { ROWS } from "../e2e/source.ts";
import { oneLine, runCli } from "./cli.ts";

// Starts processes and databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(60_000);

let world: PgWorld;
let apiKey: string;
let synced: { id: string };
let paused: { id: string };

beforeAll(async () => {
  world = await openPgWorld();
  // A key of its own for the CLI, handed over in the environment as an operator would.
  apiKey = must(await world.api.call("POST", "/v1/api-keys", { name: "cli", permission: "read_only" }), 201).key;
  synced = await createAndBackfill(world, tableBody(world, { name: "docs" }));
  paused = await createAndBackfill(world, tableBody(world, { name: "docs_paused" }));
  await eventuallyStatus(world.api, synced.id, "synced", 30_000);
  await eventuallyStatus(world.api, paused.id, "synced", 30_000);
  must(await world.api.call("POST", `/v1/vector-tables/${paused.id}/sync/pause`), 200);
});

afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { VECSYNC_URL: world.proc.url, VECSYNC_API_KEY: apiKey, ...env });

/** The status table's row of a vector table, split on its column gaps. */
function rowOf(stdout: string, name: string): string[] {
  const line = stdout.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no row for ${name} in:\n${stdout}`);
  return line.trim().split(/\s{2,}/);
}

describe("happy", () => {
  test("status lists every vector table with its state, rows, pending, staleness and sync mode", async () => {
    const run = await cli(["status"]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toMatch(/^NAME\s+ID\s+STATE\s+ROWS \(SYNCED\/TOTAL\)\s+PENDING\s+STALENESS\s+SYNC$/);
    const [name, id, state, rows, pending, staleness, mode] = rowOf(run.stdout, "docs");
    expect([name, id, state, rows, pending, mode]).toEqual(["docs", synced.id, "synced", `${ROWS}/${ROWS}`, "0", "batch"]);
    expect(staleness).toMatch(/^\d+[smhd]$/);
    expect(rowOf(run.stdout, "docs_paused").slice(0, 5)).toEqual(["docs_paused", paused.id, "paused", `${ROWS}/${ROWS}`, "0"]);
  });

  test("status --json prints each table and its sync status as the API answered them", async () => {
    const run = await cli(["status", "--json"]);
    expect(run.code).toBe(0);
    const { data } = JSON.parse(run.stdout);
    const mine = data.find((r: any) => r.vector_table.id === synced.id);
    expect(mine.vector_table).toMatchObject({ name: "docs", sync_status: "synced", synced_rows: ROWS, total_rows: ROWS, sync_mode: "batch" });
    expect(mine.sync).toMatchObject({ vector_table_id: synced.id, sync_status: "synced", rows_pending: 0, last_error: null });
    expect(typeof mine.sync.staleness_secs).toBe("number");
  });

  test("flags work as well as variables, in both spellings", async () => {
    const run = await runCli(["status", `--url=${world.proc.url}`, "--api-key", apiKey], { VECSYNC_URL: "", VECSYNC_API_KEY: "" });
    expect(run.code).toBe(0);
    expect(rowOf(run.stdout, "docs")[2]).toBe("synced");
  });

  test("--environment narrows the list to that environment", async () => {
    const env = must(await world.api.call("POST", "/v1/environments", { name: "staging" }), 201);
    const run = await cli(["status", "--environment", env.id]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("no vector tables");
  });

  test("tasks lists the completed backfills with their rows", async () => {
    const run = await cli(["tasks"]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+TARGET\s+STATUS\s+PROGRESS\s+ATTEMPTS\s+AGE$/);
    for (const name of ["docs", "docs_paused"]) {
      const row = lines.find((l) => l.split(/\s{2,}/)[2] === name);
      expect(row?.split(/\s{2,}/).slice(1, 5)).toEqual(["backfill", name, "completed", `${ROWS} rows`]);
    }
    const json = await cli(["tasks", "--json"]);
    expect(JSON.parse(json.stdout).data.filter((t: any) => t.status === "completed")).toHaveLength(2);
  });
});

describe("errors", () => {
  test("an error answered by the API is one line with its code, exit 1", async () => {
    const run = await cli(["status"], { VECSYNC_API_KEY: "vsk_" + "a".repeat(40) });
    expect(run.code).toBe(1);
    expect(oneLine(run)).toMatch(/^vecsync: unauthorized: .+ \(HTTP 401 from GET \/v1\/vector-tables\)$/);
  });

  test("an unreachable service is one line, exit 1", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const run = await cli(["tasks"], { VECSYNC_URL: url });
    expect(run.code).toBe(1);
    expect(oneLine(run)).toBe(`vecsync: cannot reach the service at ${url}: connection refused`);
  });

  test.each([
    [["status"], { VECSYNC_API_KEY: "" }, "vecsync: an API key is needed: set VECSYNC_API_KEY (or pass --api-key)"],
    [["status", "--bogus"], {}, "vecsync: unknown flag --bogus"],
    [["tasks", "--url"], {}, "vecsync: --url needs a value"],
    [["tasks", "--watch", "--json"], {}, "vecsync: --json prints one answer; it does not go with --watch"],
    [["status", "stray"], {}, 'vecsync: unexpected argument "stray"'],
  ] as [string[], Record<string, string>, string][])("%p is refused with one line, exit 2", async (args, env, line) => {
    const run = await cli(args, env);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toBe(line);
  });
});
