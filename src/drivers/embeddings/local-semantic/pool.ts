// The workers that run `local-semantic-v1` off the event loop, shared by every caller in the
// process. A call's texts are sorted by length and cut into jobs of JOB_TEXTS or JOB_CHARS (the
// graph pads each run to its longest text, so like lengths waste least), queued, and handed to the
// first idle worker; a query's jobs go ahead of a sync's, so a search waits for at most one job in
// flight (~0.2 s) however large the backfill behind it.
//
// Workers start on the first job, one at a time, and keep their model: loading it costs ~1 s and
// a WASM heap that never shrinks (model.ts), so one model per worker for the life of the process.
// An idle worker is unref'd and never keeps the process alive. A worker whose job failed in the
// model, or that died, is replaced on the next job.
import { DriverError } from "../../../shared/errors.ts";
import { DIMENSIONS, WORKER_ENTRY, type JobReply, type JobRequest } from "./protocol.ts";

/**
 * A job is at most JOB_TEXTS texts and JOB_CHARS characters: a query waits behind one job at most,
 * ~0.2 s (10 product rows of ~110 characters; 32 texts of a few words), while the rate is within
 * ~10 % of its best (flat from 16 texts a run up, ~10 % lower at 8). Characters, because attention
 * grows with the square of a text's length (~20 ms for 35 tokens, ~80 ms for 256); a text counts
 * for at most TEXT_CHARS, about what its first 256 tokens span; a job holds at least one text.
 */
export const JOB_TEXTS = 32;
export const JOB_CHARS = 1024;
const TEXT_CHARS = 1200;

export type PoolCall = { maxTokens: number; urgent: boolean; signal?: AbortSignal };
export type PoolResult = { vectors: Float32Array[]; tokens: number; truncated: number };

type Done = Extract<JobReply, { ok: true }>;
type Job = { request: Omit<JobRequest, "id">; settle: (reply: Done | Error) => void; cancelled: () => boolean };
type Slot = { worker: Worker | null; job: Job | null; id: number };

/** The worker as `bun run` finds it (beside this file) or as the compiled binary does (protocol.ts). */
export function workerUrl(): string | URL {
  return import.meta.url.startsWith("file:///$bunfs/") ? `./${WORKER_ENTRY}` : new URL("./worker.ts", import.meta.url);
}

export class WorkerPool {
  private readonly slots: Slot[];
  private readonly urgent: Job[] = [];
  private readonly queue: Job[] = [];

  constructor(
    size: number,
    private readonly spawn: () => Worker = () => new Worker(workerUrl()),
  ) {
    this.slots = Array.from({ length: size }, () => ({ worker: null, job: null, id: 0 }));
  }

  /** Workers started and alive (each holding a model). */
  get started(): number {
    return this.slots.filter((s) => s.worker !== null).length;
  }

  async embed(texts: string[], call: PoolCall): Promise<PoolResult> {
    call.signal?.throwIfAborted();
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const vectors = new Array<Float32Array>(texts.length);
    let tokens = 0;
    let truncated = 0;
    let failed = false;
    const jobs: Promise<void>[] = [];
    for (const picked of jobsOf(order, texts)) {
      const done = new Promise<Done>((resolve, reject) => {
        const job: Job = {
          request: { texts: picked.map((i) => texts[i]!), maxTokens: call.maxTokens },
          settle: (reply) => (reply instanceof Error ? reject(reply) : resolve(reply)),
          cancelled: () => failed || call.signal?.aborted === true,
        };
        (call.urgent ? this.urgent : this.queue).push(job);
      });
      jobs.push(
        done.then((reply) => {
          picked.forEach((at, k) => (vectors[at] = reply.vectors.slice(k * DIMENSIONS, (k + 1) * DIMENSIONS)));
          tokens += reply.tokens;
          truncated += reply.truncated;
        }),
      );
    }
    this.pump();
    const { promise: aborted, reject: abort } = Promise.withResolvers<never>();
    const onAbort = () => abort(call.signal!.reason);
    call.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.race([Promise.all(jobs), aborted]);
    } catch (err) {
      failed = true; // the call's queued jobs are dropped when a worker would take them
      jobs.forEach((j) => j.catch(() => {}));
      throw err;
    } finally {
      call.signal?.removeEventListener("abort", onAbort);
    }
    return { vectors, tokens, truncated };
  }

  /** Stops every worker, failing the jobs they run; the next call starts afresh (benchmarks, tests). */
  close(): void {
    for (const slot of this.slots) {
      if (slot.worker) this.retire(slot, slot.worker);
      slot.job?.settle(new DriverError("local: the local-semantic-v1 workers were stopped", { retryable: true }));
      slot.job = null;
    }
  }

  private next(): Job | undefined {
    for (const queue of [this.urgent, this.queue]) {
      while (queue.length > 0) {
        const job = queue.shift()!;
        if (job.cancelled()) job.settle(new Error("cancelled"));
        else return job;
      }
    }
    return undefined;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.next();
      if (!job) return;
      slot.job = job;
      const worker = (slot.worker ??= this.start(slot));
      worker.ref();
      worker.postMessage({ id: ++slot.id, ...job.request } satisfies JobRequest);
    }
  }

  private start(slot: Slot): Worker {
    const worker = this.spawn();
    worker.addEventListener("message", (event: MessageEvent<JobReply>) => {
      const reply = event.data;
      if (slot.worker !== worker || reply.id !== slot.id || !slot.job) return;
      if (!reply.ok && reply.stage === "run") this.retire(slot, worker);
      this.finish(slot, reply.ok ? reply : failure(reply));
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      if (slot.worker !== worker) return;
      this.retire(slot, worker);
      this.finish(slot, new DriverError(`local: the local-semantic-v1 worker failed: ${event.message}`, { retryable: true }));
    });
    return worker;
  }

  /** Ends the slot's job; the slot takes the next one, or lets the process exit if none waits. */
  private finish(slot: Slot, reply: Done | Error): void {
    const job = slot.job;
    slot.job = null;
    job?.settle(reply);
    this.pump();
    if (!slot.job) slot.worker?.unref();
  }

  private retire(slot: Slot, worker: Worker): void {
    if (slot.worker === worker) slot.worker = null;
    worker.terminate();
  }
}

/** `order` (indices into `texts`) cut into jobs of at most JOB_TEXTS texts and JOB_CHARS characters. */
function jobsOf(order: number[], texts: string[]): number[][] {
  const jobs: number[][] = [];
  let job: number[] = [];
  let chars = 0;
  for (const i of order) {
    const size = Math.min(texts[i]!.length, TEXT_CHARS);
    if (job.length > 0 && (job.length === JOB_TEXTS || chars + size > JOB_CHARS)) {
      jobs.push(job);
      job = [];
      chars = 0;
    }
    job.push(i);
    chars += size;
  }
  if (job.length > 0) jobs.push(job);
  return jobs;
}

function failure(reply: Extract<JobReply, { ok: false }>): DriverError {
  return reply.stage === "load"
    ? new DriverError(`local: local-semantic-v1 could not be loaded: ${reply.message}`, { retryable: false })
    : new DriverError(`local: local-semantic-v1 failed: ${reply.message}`, { retryable: true });
}
