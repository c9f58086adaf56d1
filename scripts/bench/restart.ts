// `bun run bench restart [--rows 100000] [--dims 256] [--keep]` (--keep leaves the data dir, named on stderr)
// Restart time of the managed store after kill -9 (issue 12, item 9). A child process writes
// `rows` rows in pages of 1,000 (random unit vectors, as the fake providers make) and is killed
// with SIGKILL once it has written them all; then the store is opened on the same data twice:
//   A. as left: the row-count checkpoints (restart.ts CHECKPOINT_ROWS) bound the replay;
//   B. every index file removed: all `rows` written since the last checkpoint (the old
//      behaviour when no process lived to close), i.e. a rebuild from libSQL.
// Each reports: open() (searchable through SQL), ready (HNSW serving), swept (strays checked).
import { createClient } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { VectorStore } from "../../src/drivers/vector-store/index.ts";
import type { UpsertRow } from "../../src/drivers/store-api/index.ts";

const writer = process.argv.indexOf("--writer");
if (writer >= 0) {
  const [dir, rows, dims] = process.argv.slice(writer + 1) as [string, string, string];
  await write(dir, Number(rows), Number(dims));
  process.stdout.write("done\n");
  setInterval(() => {}, 1000);
} else await main();

function page(from: number, n: number, dims: number): UpsertRow[] {
  return Array.from({ length: n }, (_, i) => {
    const v = Float32Array.from({ length: dims }, () => Math.random() - 0.5);
    return { pk: String(from + i), textHash: "t", metaHash: "m", text: `row ${from + i}`, metadata: {}, vector: v };
  });
}

async function write(dir: string, rows: number, dims: number): Promise<void> {
  const client = createClient({ url: `file:${join(dir, "vecsync.db")}` });
  await client.execute("PRAGMA journal_mode = WAL");
  const store = await VectorStore.open({ client, indexDir: join(dir, "indexes"), autoCalibrate: false });
  await store.createCollection("vt_bench", { dimensions: dims, metadata: [], numericPk: true });
  for (let from = 1; from <= rows; from += 1000) await store.upsert("vt_bench", page(from, Math.min(1000, rows - from + 1), dims));
}

async function restart(dir: string, label: string): Promise<void> {
  const client = createClient({ url: `file:${join(dir, "vecsync.db")}` });
  const events: Record<string, Record<string, unknown>> = {};
  const t0 = performance.now();
  const store = await VectorStore.open({ client, indexDir: join(dir, "indexes"), autoCalibrate: false, log: (e, f) => (events[e] = f) });
  const opened = performance.now() - t0;
  while (store.status("vt_bench") !== "ready") await Bun.sleep(10);
  const ready = performance.now() - t0;
  await store.whenReady("vt_bench");
  const swept = performance.now() - t0;
  const loaded = events["vector_store.index_loaded"];
  if (loaded) console.error(`   load: checkpoint ${loaded.checkpointMs} ms, rows ${loaded.rowsMs} ms, replay ${loaded.replayMs} ms`);
  const how = events["vector_store.index_loaded"] ? `loaded, replayed ${events["vector_store.index_loaded"].replayed}` : `rebuilt (${events["vector_store.index_rebuild"]?.reason})`;
  console.log(`${label.padEnd(44)} open ${opened.toFixed(0).padStart(6)} ms  ready ${ready.toFixed(0).padStart(6)} ms  swept ${swept.toFixed(0).padStart(6)} ms  ${how}`);
  await store.close();
  client.close();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(3), options: { rows: { type: "string", default: "100000" }, dims: { type: "string", default: "256" }, keep: { type: "boolean", default: false } } });
  const rows = Number(values.rows);
  const dims = Number(values.dims);
  const dir = mkdtempSync(join(tmpdir(), "vecsync-bench-restart-"));
  try {
    const started = performance.now();
    const child = Bun.spawn([process.execPath, import.meta.path, "--writer", dir, String(rows), String(dims)], { stdout: "pipe", stderr: "inherit" });
    await new Response(child.stdout).body!.getReader().read(); // "done"
    child.kill("SIGKILL");
    await child.exited;
    console.error(`wrote ${rows} × ${dims} in ${((performance.now() - started) / 1000).toFixed(1)} s, then SIGKILL`);
    await restart(dir, `A. after kill -9, row-count checkpoints`);
    if (values.keep) return console.error(`kept ${dir}`);
    rmSync(join(dir, "indexes"), { recursive: true, force: true });
    const client = createClient({ url: `file:${join(dir, "vecsync.db")}` });
    await client.execute("DELETE FROM vs_checkpoints");
    client.close();
    await restart(dir, `B. ${rows} rows since the last checkpoint`);
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}
