// `vecsync tasks --watch` on a terminal (a pty through script(1)): a progress bar for the running
// backfill, redrawn in place every second (cursor up over the last frame, erase below) until no task
// is left (--until-done) or Ctrl-C. The embedding provider is the emb_a fake answering slowly, so the
// backfill is running for several redraws.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../harness.ts";
import { eventuallyStatus, must } from "../e2e/helpers.ts";
import { openPgWorld, tableBody, type PgWorld } from "../e2e/postgres-world.ts";
import { ROWS } from "../e2e/source.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings/server.ts";

setDefaultTimeout(90_000);

/** Each embedding request takes this long: 300 rows are two pages, so the backfill runs for at least this. */
const SLOW_EMBEDDING_MS = 4_000;
const CURSOR_UP = /\x1b\[(\d+)A\x1b\[J/g;
const BAR = /\[[#-]{20}\] +\d+% +[\d,]+\/300 rows/;

let world: PgWorld;
let fake: FakeEmbeddings;
let apiKey: string;
let providerId: string;

beforeAll(async () => {
  world = await openPgWorld();
  fake = await startFakeEmbeddings("emb_a");
  apiKey = must(await world.api.call("POST", "/v1/api-keys", { name: "watch" }), 201).key;
  providerId = must(await world.api.call("POST", "/v1/embedding-providers", { name: "fake-a", provider: "emb_a", api_key: fake.apiKey, base_url: fake.url }), 201).id;
});

afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
  await fake?.stop();
});

/** A vector table on the slow provider, its backfill started. */
async function slowBackfill(name: string): Promise<string> {
  fake.set({ latencyMs: SLOW_EMBEDDING_MS });
  const body = { ...tableBody(world, { name }), embedding_provider_id: providerId, embedding_model: "text-embedding-3-small", embedding_dimensions: 64 };
  const table = must(await world.api.call("POST", "/v1/vector-tables", body), 201);
  must(await world.api.call("POST", `/v1/vector-tables/${table.id}/backfill`), 200);
  return table.id;
}

/** `vecsync tasks …` on a 160-column pty; stdin is the pty's keyboard. */
function onTerminal(args: string[]) {
  const command = [BUN, join(ROOT, "src/main.ts"), "tasks", ...args].map((a) => `'${a}'`).join(" ");
  const proc = Bun.spawn(["script", "-qefc", `stty cols 160; exec ${command}`, "/dev/null"], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_URL: world.proc.url, VECSYNC_API_KEY: apiKey, TERM: "xterm" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let screen = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) screen += decoder.decode(chunk, { stream: true });
  })();
  return { proc, screen: () => screen, done: async () => (await proc.exited, await reading, screen) };
}

const frames = (screen: string) => screen.split(/\x1b\[\d+A\x1b\[J/);

describe("happy", () => {
  test("--watch --until-done redraws a progress bar in place until the backfill is done", async () => {
    const tableId = await slowBackfill("watched");
    const term = onTerminal(["--watch", "--until-done"]);
    expect(await term.proc.exited).toBe(0);
    const screen = await term.done();
    // Every redraw moves up over exactly the lines of the frame before it.
    const ups = [...screen.matchAll(CURSOR_UP)].map((m) => Number(m[1]));
    expect(ups.length).toBeGreaterThanOrEqual(2);
    const shown = frames(screen);
    for (const [i, up] of ups.entries()) expect(shown[i]!.split("\r\n").length - 1).toBe(up);
    // A frame while running shows the bar on the task's line; the last shows it completed.
    const running = shown.filter((f) => BAR.test(f));
    expect(running.length).toBeGreaterThanOrEqual(1);
    expect(running[0]!.split("\r\n").find((l) => BAR.test(l))).toMatch(/backfill +watched +running +\[/);
    expect(shown.at(-1)!).toMatch(new RegExp(`backfill +watched +completed +${ROWS} rows`));
    await eventuallyStatus(world.api, tableId, "synced", 30_000);
  });

  test("--watch keeps redrawing until interrupted with Ctrl-C", async () => {
    await slowBackfill("interrupted");
    const term = onTerminal(["--watch"]);
    const deadline = Date.now() + 30_000;
    while ([...term.screen().matchAll(CURSOR_UP)].length < 2 && Date.now() < deadline) await Bun.sleep(100);
    expect([...term.screen().matchAll(CURSOR_UP)].length).toBeGreaterThanOrEqual(2);
    term.proc.stdin.write("\x03"); // the pty turns it into SIGINT for the watching process
    term.proc.stdin.flush();
    const exited = await Promise.race([term.proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
    if (!exited) term.proc.kill("SIGKILL");
    expect(exited).toBe(true);
    expect(term.screen()).toContain("Ctrl-C to stop");
  });
});
