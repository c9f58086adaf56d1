// `bun run demo` end to end, as a newcomer runs it but without a terminal (stdout piped): it must
// exit 0, print every milestone, print curl commands that hold no secret, and leave nothing behind.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { curlCommand, shellVar } from "../../src/demo/client.ts";
import { BUN, PG_ADMIN_URL, ROOT } from "../harness.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const DEMO_TIMEOUT_MS = 60_000;

async function runDemo(env: Record<string, string>) {
  const proc = Bun.spawn([BUN, join(ROOT, "scripts/demo.ts")], { cwd: ROOT, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** The result rows printed under `query N: …` (until the blank line that ends the table). */
function resultRows(stdout: string, n: number): string[][] {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => l.includes(`query ${n}: `));
  const rows: string[][] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.trim()) break;
    rows.push(line.trim().split(/\s{2,}/));
  }
  return rows;
}

function expectMilestones(stdout: string) {
  expect(stdout).toContain("backfill done: 200/200 rows synced");
  for (const n of [1, 2, 3, 4]) {
    expect(stdout).toContain(`query ${n}: 5 results (model local-semantic-v1)`);
    expect(resultRows(stdout, n)).toHaveLength(5);
  }
  // Query 2 is a paraphrase sharing no word with "camping tent": the semantic model finds tents first.
  expect(resultRows(stdout, 2)[0]!.at(-1)).toContain("camping tent");
  // Query 3 filters on category = outdoors and price < 100; query 4 on in_stock and two categories.
  for (const [, , , category, price] of resultRows(stdout, 3)) {
    expect(category).toBe("outdoors");
    expect(Number(price)).toBeLessThan(100);
  }
  for (const [, , , category, , inStock] of resultRows(stdout, 4)) {
    expect(["kitchen", "books"]).toContain(category!);
    expect(inStock).toBe("true");
  }
  // The edited product, with its new category and price, tops the query for its new words.
  expect(stdout).toMatch(/sync picked up the change to product 42 after \d+\.\d s[^\n]*\n(?:.*\n)*?\s+1\s+42\s+\d\.\d{3}\s+outdoors\s+24\.50\s/);
  expect(stdout).toContain("demo finished in");
  // Curl commands use the real base URL and shell variables, never a token or key.
  const base = stdout.match(/vecsync listening on (http:\/\/\S+)/)![1]!;
  expect(stdout).toContain(`$ curl -s -X POST ${base}/v1/vector-tables/`);
  expect(stdout).toContain('-H "authorization: Bearer $VECSYNC_API_KEY"');
  expect(stdout).not.toMatch(/Bearer (?!\$)/);
  expect(stdout).not.toContain("vsk_"); // the API key format
  expect(stdout).not.toContain("\r");
}

describe("happy", () => {
  test(
    "on the local Postgres: backfill, four queries, a sync pick-up, and the sample database dropped",
    async () => {
      const { stdout, stderr, code } = await runDemo({ VECSYNC_DEMO_PG_URL: PG_ADMIN_URL });
      if (code !== 0) throw new Error(`demo exited ${code}\n${stdout}\n${stderr}`);
      expectMilestones(stdout);
      const database = stdout.match(/new database (vecsync_demo_[a-z0-9]+)/)![1]!;
      const dataDir = stdout.match(/data dir (\S+)\)/)![1]!;
      const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        expect(await admin`SELECT datname FROM pg_database WHERE datname = ${database}`).toHaveLength(0);
      } finally {
        await admin.end({ timeout: 5 });
      }
      expect(existsSync(dataDir)).toBe(false);
    },
    DEMO_TIMEOUT_MS,
  );

  test(
    "without Postgres it says so and runs on the warehouse test server",
    async () => {
      const { stdout, stderr, code } = await runDemo({ VECSYNC_DEMO_PG_URL: "postgres://postgres@127.0.0.1:1/postgres" });
      if (code !== 0) throw new Error(`demo exited ${code}\n${stdout}\n${stderr}`);
      expect(stdout).toContain("Postgres is not reachable at postgres://postgres@127.0.0.1:1/postgres");
      expect(stdout).toContain("Using the warehouse test server");
      expectMilestones(stdout);
    },
    DEMO_TIMEOUT_MS,
  );
});

describe("curl commands", () => {
  test("a shell variable in a body is spliced into the single-quoted JSON, and quotes survive", async () => {
    const command = curlCommand("http://127.0.0.1:1", "POST", "/v1/auth/verify", "none", { email: "o'brien@example.com", code: shellVar("CODE") });
    const data = command.match(/-d ('[\s\S]*')$/)![1]!;
    const proc = Bun.spawn(["bash", "-c", `printf %s ${data}`], { env: { CODE: "123456" }, stdout: "pipe" });
    expect(JSON.parse(await new Response(proc.stdout).text())).toEqual({ email: "o'brien@example.com", code: "123456" });
  });
});
