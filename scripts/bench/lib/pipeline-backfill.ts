// Two measurements beside `bench pipeline`'s backfill (issue 16):
//   - queries while the backfill runs: a prober (prober-worker.ts) sends one top-10 query every
//     50 ms to the table being filled and keeps each answer's latency, so the figures show what a
//     user searching during a backfill waits (the same prober on the idle table afterwards is the
//     baseline);
//   - raw usearch's build of the very vectors the backfill stored (read back from the service's
//     libSQL file), with the store's index parameters and threads, in the same run: the rate the
//     backfill is compared with.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { Index, MetricKind, ScalarKind } from "usearch";
import { DEFAULT_INDEX_PARAMS } from "../../../src/drivers/vector-store/index.ts";
import { percentile } from "./measure.ts";
import type { Api } from "./pipeline-service.ts";

export type Probed = { count: number; errors: number; p50: number; p99: number; max: number };

/**
 * Starts probing `tableId` from a worker thread; `stop()` answers the latencies of the answers
 * that came back 200. A worker, so the figures are the service's: on the bench's own thread the
 * probe's timings also held whatever that thread was doing, above all the fake provider answering
 * the backfill's embedding calls. `everyMs`: the pace of its queries (default 50 ms; 0: one after
 * another, a client without pause).
 */
export function startProber(api: Api, tableId: string, everyMs?: number): { warm: Promise<void>; stop(): Promise<Probed> } {
  const worker = new Worker(new URL("./prober-worker.ts", import.meta.url));
  let warmed = () => {};
  const warm = new Promise<void>((resolve) => (warmed = resolve));
  const done = new Promise<{ times: number[]; errors: number }>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent) => (event.data === "warm" ? warmed() : resolve(event.data));
    worker.onerror = (event) => reject(new Error(`prober: ${event.message}`));
  });
  worker.postMessage({ ...api.credentials, tableId, everyMs });
  return {
    warm,
    async stop() {
      worker.postMessage("stop");
      const { times, errors } = await done;
      worker.terminate();
      times.sort((a, b) => a - b);
      return { count: times.length, errors, p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1) ?? NaN };
    },
  };
}

/** The vector table's live generation's f32 vectors, read back from the service's database file. */
function storedVectors(dataDir: string, tableId: string, tableName: string, dims: number): Float32Array {
  const db = new Database(join(dataDir, "vecsync.db"), { readonly: true });
  try {
    const collection = `vt_${tableId.slice(0, 8)}_${tableName.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;
    const live = db.query("SELECT live_generation AS g FROM vs_collections WHERE name = ?").get(collection) as { g: number } | null;
    if (!live) throw new Error(`no collection ${collection}`);
    const docs = `"vs_${collection}__g${live.g}__docs"`;
    const n = (db.query(`SELECT count(*) AS n FROM ${docs}`).get() as { n: number }).n;
    const out = new Float32Array(n * dims);
    let i = 0;
    for (const row of db.query(`SELECT vec FROM ${docs}`).iterate() as Iterable<{ vec: Uint8Array }>) {
      out.set(new Float32Array(row.vec.buffer, row.vec.byteOffset, dims), i * dims);
      i++;
    }
    return out;
  } finally {
    db.close();
  }
}

/** Builds a usearch index of the stored vectors as the store configures its own; answers rows/s. */
export function rawBuild(dataDir: string, tableId: string, tableName: string, dims: number): { rows: number; ms: number; rate: number; cpuSeconds: number } {
  const vectors = storedVectors(dataDir, tableId, tableName, dims);
  const rows = vectors.length / dims;
  const p = DEFAULT_INDEX_PARAMS;
  const index = new Index({ dimensions: dims, metric: MetricKind.Cos, quantization: ScalarKind.I8, connectivity: p.connectivity, expansion_add: p.expansionAdd, expansion_search: p.expansionSearch, multi: false });
  const BATCH = 10_000;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let from = 0; from < rows; from += BATCH) {
    const n = Math.min(BATCH, rows - from);
    const keys = new BigUint64Array(n);
    for (let j = 0; j < n; j++) keys[j] = BigInt(from + j);
    index.add(keys, vectors.slice(from * dims, (from + n) * dims), p.threads);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { rows, ms, rate: Math.round((rows * 1000) / ms), cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}
