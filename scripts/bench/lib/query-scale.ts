// What `bun run bench query` needs at 1M-10M rows: resident memory readings, chunk passes that
// do not count the generator's time, the raw usearch baseline built a chunk at a time, and
// whether pgvector's baseline (pgvector.ts, which takes the whole dataset) can run here at all.
import { SQL } from "bun";
import { readFileSync, rmSync, statfsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Index, MetricKind, ScalarKind } from "usearch";
import type { IndexParams } from "../../../src/drivers/vector-store/index.ts";
import { type Chunk, type DataSource, recallAt } from "./data.ts";
import { measure, type Sample } from "./measure.ts";
import { MAINTENANCE_WORK_MEM_GB } from "./pgvector.ts";

const GB = 1e9;

/** The process's resident bytes now and at their peak (VmHWM), after a full collection. */
/**
 * Resident memory after a full GC and a turn of the event loop: native objects (libSQL's
 * statements: ~2.5 KB each, plus what they bound) are finalized only when the loop turns, so a
 * reading straight after a GC, or a loop of awaits that never yields to it, counts them all.
 */
export async function memory(): Promise<{ rss: number; peak: number }> {
  for (let i = 0; i < 2; i++) {
    Bun.gc(true);
    await Bun.sleep(50);
  }
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

export function memAvailable(): number {
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? NaN) * 1024;
}

export function gb(bytes: number): string {
  return `${(bytes / GB).toFixed(bytes < 10 * GB ? 2 : 1)} GB`;
}

/** The source's chunks, with the time spent making them (`seconds`) kept apart from the consumer's. */
export function timedChunks(data: DataSource): Iterable<Chunk> & { seconds: number } {
  const out = {
    seconds: 0,
    *[Symbol.iterator]() {
      const it = data.chunks();
      for (;;) {
        const t0 = performance.now();
        const next = it.next();
        out.seconds += (performance.now() - t0) / 1000;
        if (next.done) return;
        yield next.value;
      }
    },
  };
  return out;
}

export interface RawResult {
  sample: Sample;
  seconds: number;
  fileBytes: number; // per vector
  residentBytes: number; // per vector: RSS after the build minus before
}

/** A raw baseline's scalar: the store's index is i8 always; f16 is the reference. */
export type RawScalar = "f32" | "f16" | "i8";

/** usearch alone (no filters, no rows): keys are row ids, added a chunk at a time. */
export async function rawUsearch(data: DataSource, scalar: RawScalar, params: IndexParams, truth: number[][], k: number): Promise<RawResult> {
  const quantization = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 }[scalar];
  const before = await memory();
  const raw = new Index({ dimensions: data.dims, metric: MetricKind.Cos, quantization, connectivity: params.connectivity, expansion_add: params.expansionAdd, expansion_search: params.expansionSearch, multi: false });
  const chunks = timedChunks(data);
  const t0 = performance.now();
  for (const { start, vectors } of chunks) {
    raw.add(BigUint64Array.from({ length: vectors.length / data.dims }, (_, i) => BigInt(start + i)), vectors, params.threads);
  }
  const seconds = (performance.now() - t0) / 1000 - chunks.seconds;
  const residentBytes = ((await memory()).rss - before.rss) / data.n;
  const file = join(tmpdir(), `vecsync-bench-raw-${process.pid}.usearch`);
  raw.save(file);
  const fileBytes = statSync(file).size / data.n;
  rmSync(file);
  const sample = await measure(data.queries.length, async (i) => recallAt(Array.from(raw.search(data.queries[i]!, k, 1).keys, Number), truth[i]!));
  return { sample, seconds, fileBytes, residentBytes };
}

/**
 * Whether pgvector.ts can load and index these rows here, from an estimate (pgvector 0.8's page
 * layout) and measurements of this machine; null when it can, else why not, with the figures.
 * pgvector.ts writes its CSV as one JS string (at most 2^31 − 1 characters), sets
 * maintenance_work_mem to 2 GB (past it the HNSW build goes on on disk, many times slower) and
 * holds every row in memory as f32 and as CSV text. The graph and memory limits apply only to
 * streamed runs: in-memory runs (--large) try pgvector as before.
 */
export async function pgvectorFit(data: DataSource, m: number, checkGraph: boolean): Promise<string | null> {
  const { n, dims } = data;
  // CSV characters measured on the first chunk's rows (pgvector.ts's format: 7 significant digits).
  const first = data.chunks().next().value!;
  const sampleRows = Math.min(1000, first.vectors.length / dims);
  let chars = 0;
  for (let i = 0; i < sampleRows; i++) chars += Array.from(first.vectors.subarray(i * dims, (i + 1) * dims), (x: number) => x.toPrecision(7)).join(",").length + 30;
  const csvChars = (chars / sampleRows) * n;
  // Heap: 24 B tuple header + id, price, vector (8 B header + 4 B a dimension), 4 B line pointer.
  const heap = n * (24 + 16 + 8 + 4 * dims + 4);
  // HNSW: per element a tuple with the vector and one with its neighbours' 6 B tids (2m on layer 0
  // and m on the layers above, ~1/(m−1) of them), plus headers; price and primary-key btrees ~40 B.
  const hnswDisk = n * (4 * dims + 8 + 6 * (2 * m + 2) + 64) + n * 40;
  // Pages are not filled to the byte: the 100k × 384 run measured 3,732 B a row against 3,440 here.
  const onDisk = 1.1 * (heap + hnswDisk);
  // The in-memory build graph: each element's vector, its neighbour candidates (16 B each), ~100 B.
  const graph = n * (4 * dims + 8 + 16 * (2 * m + 2) + 100);
  const free = await dataDirFree();
  const available = memAvailable();
  const inMemory = n * dims * 4; // the f32 rows (the CSV is written a chunk at a time)
  const figures = `estimated table + indexes ${gb(onDisk)}, CSV ${gb(csvChars)}, HNSW build graph ${gb(graph)} against maintenance_work_mem ${MAINTENANCE_WORK_MEM_GB} GB, loader memory ${gb(inMemory)} against MemAvailable ${gb(available)}, data directory free ${Number.isFinite(free) ? gb(free) : "unknown"}`;
  const problems: string[] = [];
  if (onDisk + csvChars > free) problems.push("the table, its indexes and the CSV would not fit on the disk");
  if (checkGraph && graph > MAINTENANCE_WORK_MEM_GB * 2 ** 30) problems.push("the HNSW graph exceeds maintenance_work_mem (pgvector would finish the build on disk, many times slower)");
  if (checkGraph && inMemory > available / 2) problems.push("the loader would hold most of the free memory");
  return problems.length ? `${problems.join("; ")} — ${figures}` : null;
}

/** Free bytes where the PostgreSQL server keeps its data (NaN when it cannot be read, e.g. a remote server). */
async function dataDirFree(): Promise<number> {
  const admin = new SQL(process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"); // as pgvector.ts
  try {
    const [row] = await admin`SHOW data_directory`;
    const s = statfsSync(String(row.data_directory));
    return s.bavail * s.bsize;
  } catch {
    return NaN;
  } finally {
    await admin.close();
  }
}
