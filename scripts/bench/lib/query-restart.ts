// The store reopened in a fresh process, for `bun run bench query`: the bench's own process keeps
// what its allocators took during the build (at 100k-300k × 384 its RSS stayed ~3× the store's
// estimate after the store was closed), so a restarted service's resident memory and start-up
// peak are only seen in a process that never built anything. The child opens the files, waits
// until the collection is servable through HNSW, answers one search, reports one JSON line, exits.
import { join } from "node:path";
import { openDatabase } from "../../../src/db/client.ts";
import { VectorStore, type IndexParams } from "../../../src/drivers/vector-store/index.ts";
import { memory } from "./query-scale.ts";

export interface FreshRestart {
  readySeconds: number;
  firstSearchSeconds: number;
  residentBytes: number; // RSS once ready, minus the RSS before the store opened
  peakBytes: number; // VmHWM of the whole child
}

interface Job {
  dir: string;
  params: IndexParams;
  exactCapScale?: number;
  floatMirrorBytes?: number;
  dims: number;
}

export async function freshRestart(job: Job): Promise<FreshRestart | string> {
  const proc = Bun.spawn([process.execPath, import.meta.path, JSON.stringify(job)], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) return `the child exited with ${code}: ${err.trim().split("\n").slice(-3).join(" ")}`;
  return JSON.parse(out) as FreshRestart;
}

if (import.meta.main) {
  const job = JSON.parse(process.argv[2]!) as Job;
  const before = await memory();
  const t0 = performance.now();
  const { client } = await openDatabase(`file:${join(job.dir, "vecsync.db")}`); // as the service opens it
  const store = await VectorStore.open({ client, indexDir: join(job.dir, "indexes"), index: job.params, exactCapScale: job.exactCapScale, floatMirrorBytes: job.floatMirrorBytes, autoCalibrate: false });
  while (store.status("bench") !== "ready") await Bun.sleep(5);
  const readySeconds = (performance.now() - t0) / 1000;
  const probe = new Float32Array(job.dims);
  probe[0] = 1;
  await store.search("bench", { vector: probe, k: 10 });
  const firstSearchSeconds = (performance.now() - t0) / 1000;
  const after = await memory();
  const result: FreshRestart = { readySeconds, firstSearchSeconds, residentBytes: after.rss - before.rss, peakBytes: after.peak };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // Exit without close(): nothing was written, and close() would wait for the stray sweep.
  process.exit(0);
}
