// README.md's walk-through is docs/walkthrough.sh, included verbatim; run here as a user runs it,
// against a real service, a real Postgres source table and the emb_a fake standing in for an
// OpenAI-compatible embeddings server. It must end with exit 0, and stop at the first failed step.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PG_ADMIN_URL, ROOT, startProcess, tempDir, throwawayPostgres, type RunningProcess, type TempDir, type ThrowawayDatabase } from "../harness.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings/server.ts";

setDefaultTimeout(120_000);

const SCRIPT = join(ROOT, "docs/walkthrough.sh");
const CATEGORIES = ["outdoors", "kitchen", "books", "electronics"];

let pg: ThrowawayDatabase;
let fake: FakeEmbeddings;
let service: RunningProcess;
let scratch: TempDir;

beforeAll(async () => {
  pg = await throwawayPostgres();
  await pg.sql`CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, description text, category text, price double precision, in_stock boolean)`;
  const rows = Array.from({ length: 40 }, (_, i) => ({
    id: i + 1,
    name: i % 4 === 0 ? `Rain jacket model ${i}` : `Item ${i}`,
    description: i % 4 === 0 ? "waterproof shell for hiking trips in rainy weather" : "an everyday thing for the home",
    category: CATEGORIES[i % CATEGORIES.length]!,
    price: 20 + (i * 7) % 150,
    in_stock: i % 3 !== 0,
  }));
  await pg.sql`INSERT INTO products ${pg.sql(rows)}`;
  fake = await startFakeEmbeddings("emb_a");
  service = await startProcess();
  scratch = tempDir();
});

afterAll(async () => {
  await service?.[Symbol.asyncDispose]();
  await fake?.stop();
  await pg?.[Symbol.asyncDispose]();
  scratch?.[Symbol.dispose]();
});

async function walkthrough(env: Record<string, string>) {
  const admin = new URL(PG_ADMIN_URL);
  const proc = Bun.spawn(["bash", SCRIPT], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      VECSYNC_URL: service.url,
      VECSYNC_DATA_DIR: service.dataDir,
      EMAIL: `walker-${crypto.randomUUID().slice(0, 8)}@example.com`,
      PGHOST: "127.0.0.1",
      PGPORT: admin.port || "5432",
      PGDATABASE: pg.name,
      PGUSER: admin.username || "postgres",
      EMBEDDINGS_URL: fake.url,
      EMBEDDINGS_KEY: fake.apiKey,
      EMBEDDING_DIMENSIONS: "256",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("happy", () => {
  test("README.md includes docs/walkthrough.sh verbatim", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("```bash\n" + readFileSync(SCRIPT, "utf8") + "```\n");
  });

  test("the walk-through runs from sign-in to a filtered query and a backup, exit 0", async () => {
    const backup = join(scratch.path, "walkthrough-backup.db");
    const run = await walkthrough({ BACKUP_FILE: backup });
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    for (const step of ["== 0.", "== 1.", "== 2.", "== 3.", "== 4.", "== 5.", "== 6.", "== 7.", "== 8.", "== done"]) expect(run.stdout).toContain(step);
    expect(run.stdout).toContain('"status":"connected"');
    expect(run.stdout).toMatch(/^products +\S+ +synced +40\/40 +0 +\S+ +batch$/m);
    // Every result of the query passes its filters.
    const results = run.stdout.split("\n").filter((l) => l.startsWith('{"id":')).map((l) => JSON.parse(l));
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.metadata.category === "outdoors" && r.metadata.price < 100).toBe(true);
    expect(run.stdout).toContain(`backup written: ${backup}`);
    expect(existsSync(backup)).toBe(true);
    // The embeddings came from the server the script named, with the key it was given.
    expect(fake.requests.some((r) => r.key === fake.apiKey)).toBe(true);
  });
});

describe("errors", () => {
  test("a failing step stops the walk-through there, saying which", async () => {
    const run = await walkthrough({ PGDATABASE: "vecsync_no_such_database" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("walkthrough: connection test failed:");
    expect(run.stdout).toContain("== 4.");
    expect(run.stdout).not.toContain("== 5.");
  });

  test("an HTTP error stops it with the API's answer", async () => {
    const run = await walkthrough({ EMBEDDINGS_URL: "http://169.254.169.254/v1" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("walkthrough: POST /v1/embedding-providers failed:");
    expect(run.stderr).toContain('"code":"validation_error"');
    expect(run.stdout).not.toContain("== 4.");
  });
});
