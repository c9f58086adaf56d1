// The semantic model's worker pool against scripted workers: what it sends, in which order, and
// what it does with each kind of answer. No model runs here (model.test.ts runs it).
import { describe, expect, test } from "bun:test";
import { JOB_CHARS, JOB_TEXTS, WorkerPool } from "../../../../src/drivers/embeddings/local-semantic/pool.ts";
import { DIMENSIONS, type JobReply, type JobRequest } from "../../../../src/drivers/embeddings/local-semantic/protocol.ts";
import { DriverError } from "../../../../src/shared/errors.ts";

/** A worker that records what it is sent and answers when told to. */
class ScriptedWorker extends EventTarget {
  readonly jobs: JobRequest[] = [];
  referenced = false;
  terminated = false;
  postMessage(job: JobRequest) {
    this.jobs.push(job);
  }
  ref() {
    this.referenced = true;
  }
  unref() {
    this.referenced = false;
  }
  terminate() {
    this.terminated = true;
  }
  /** Answers the last job: each text's vector starts with its length, then its position in the job. */
  answer(override?: Partial<JobReply>) {
    const job = this.jobs.at(-1)!;
    const vectors = new Float32Array(job.texts.length * DIMENSIONS);
    job.texts.forEach((t, i) => vectors.set([t.length, i], i * DIMENSIONS));
    const reply = { id: job.id, ok: true, vectors, tokens: job.texts.length * 2, truncated: 1, ...override } as JobReply;
    this.dispatchEvent(new MessageEvent("message", { data: reply }));
  }
  crash(message: string) {
    this.dispatchEvent(new ErrorEvent("error", { message }));
  }
}

function poolOf(size = 1) {
  const workers: ScriptedWorker[] = [];
  const pool = new WorkerPool(size, () => {
    const w = new ScriptedWorker();
    workers.push(w);
    return w as unknown as Worker;
  });
  return { pool, workers };
}

const settled = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));
const turn = () => new Promise((r) => setImmediate(r));
const doc = { maxTokens: 256, urgent: false };

describe("happy", () => {
  test("starts no worker before the first text, then one, and keeps it", async () => {
    const { pool, workers } = poolOf();
    expect(workers).toHaveLength(0);
    const first = pool.embed(["a"], doc);
    workers[0]!.answer();
    await first;
    const second = pool.embed(["b"], doc);
    workers[0]!.answer();
    await second;
    expect(workers).toHaveLength(1);
    expect(pool.started).toBe(1);
  });

  test("sorts short texts by length into jobs of JOB_TEXTS and answers in the callers' order", async () => {
    const { pool, workers } = poolOf();
    const texts = Array.from({ length: 70 }, (_, i) => "x".repeat(1 + ((i * 37) % 30))); // 32 of them fit JOB_CHARS
    const call = pool.embed(texts, doc);
    for (let n = 0; n < 3; n++) {
      await turn();
      workers[0]!.answer();
    }
    const { vectors, tokens, truncated } = await call;
    expect(workers[0]!.jobs.map((j) => j.texts.length)).toEqual([JOB_TEXTS, JOB_TEXTS, 70 - 2 * JOB_TEXTS]);
    const sent = workers[0]!.jobs.flatMap((j) => j.texts.map((t) => t.length));
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
    vectors.forEach((v, i) => expect(v[0]).toBe(texts[i]!.length));
    expect(vectors.every((v) => v.length === DIMENSIONS)).toBe(true);
    expect([tokens, truncated]).toEqual([140, 3]);
  });

  test("long texts go fewer to a job (JOB_CHARS), each counting at most what the model reads", async () => {
    const { pool, workers } = poolOf();
    const texts = [...Array.from({ length: 7 }, () => "y".repeat(300)), "z".repeat(100_000)];
    const call = pool.embed(texts, doc);
    for (let n = 0; n < 4; n++) {
      await turn();
      workers[0]!.answer();
    }
    await call;
    expect(JOB_CHARS).toBe(1024);
    expect(workers[0]!.jobs.map((j) => j.texts.length)).toEqual([3, 3, 1, 1]);
  });

  test("a query's job goes ahead of a backfill's queued jobs", async () => {
    const { pool, workers } = poolOf();
    const backfill = pool.embed(Array.from({ length: 3 * JOB_TEXTS }, (_, i) => `row ${i}`), doc);
    const query = pool.embed(["the query"], { maxTokens: 256, urgent: true });
    workers[0]!.answer(); // the backfill's first job, already running
    expect(workers[0]!.jobs.at(-1)!.texts).toEqual(["the query"]);
    workers[0]!.answer();
    await query;
    for (let n = 0; n < 2; n++) workers[0]!.answer();
    await backfill;
  });

  test("two workers take jobs at once; an idle worker does not keep the process alive", async () => {
    const { pool, workers } = poolOf(2);
    const call = pool.embed(Array.from({ length: 2 * JOB_TEXTS }, (_, i) => `row ${i}`), doc);
    expect(workers.map((w) => [w.jobs.length, w.referenced])).toEqual([[1, true], [1, true]]);
    workers.forEach((w) => w.answer());
    await call;
    expect(workers.map((w) => w.referenced)).toEqual([false, false]);
  });

  test("passes the token limit on with each job", async () => {
    const { pool, workers } = poolOf();
    const call = pool.embed(["a"], { maxTokens: 7, urgent: false });
    expect(workers[0]!.jobs[0]!.maxTokens).toBe(7);
    workers[0]!.answer();
    await call;
  });
});

describe("errors", () => {
  test("an aborted call rejects with the signal's reason, and its queued jobs are never sent", async () => {
    const { pool, workers } = poolOf();
    const abort = new AbortController();
    const call = settled(pool.embed(Array.from({ length: 3 * JOB_TEXTS }, (_, i) => `row ${i}`), { ...doc, signal: abort.signal }));
    abort.abort(new Error("shutting down"));
    expect(((await call) as { error: Error }).error.message).toBe("shutting down");
    const next = pool.embed(["after"], doc);
    workers[0]!.answer(); // the aborted call's running job ends; its answer is dropped
    expect(workers[0]!.jobs.at(-1)!.texts).toEqual(["after"]);
    workers[0]!.answer();
    expect((await next).vectors).toHaveLength(1);
    expect(workers[0]!.jobs).toHaveLength(2);
  });

  test("a job the model failed is retryable, and a fresh worker takes the next job", async () => {
    const { pool, workers } = poolOf();
    const call = settled(pool.embed(["a"], doc));
    workers[0]!.answer({ ok: false, stage: "run", message: "memory access out of bounds" } as Partial<JobReply>);
    const { error } = (await call) as { error: DriverError };
    expect(error).toBeInstanceOf(DriverError);
    expect([error.retryable, error.message]).toEqual([true, "local: local-semantic-v1 failed: memory access out of bounds"]);
    expect(workers[0]!.terminated).toBe(true);
    const next = pool.embed(["b"], doc);
    expect(workers).toHaveLength(2);
    workers[1]!.answer();
    await next;
  });

  test("a model that cannot load is not retryable, and the worker is kept (it would fail the same)", async () => {
    const { pool, workers } = poolOf();
    const call = settled(pool.embed(["a"], doc));
    workers[0]!.answer({ ok: false, stage: "load", message: "no such file" } as Partial<JobReply>);
    const { error } = (await call) as { error: DriverError };
    expect([error.retryable, error.message]).toEqual([false, "local: local-semantic-v1 could not be loaded: no such file"]);
    expect(workers[0]!.terminated).toBe(false);
  });

  test("a worker that dies fails its job as retryable and is replaced", async () => {
    const { pool, workers } = poolOf();
    const call = settled(pool.embed(["a"], doc));
    workers[0]!.crash("RangeError: Out of memory");
    const { error } = (await call) as { error: DriverError };
    expect([error.retryable, error.message]).toEqual([true, "local: the local-semantic-v1 worker failed: RangeError: Out of memory"]);
    const next = pool.embed(["b"], doc);
    workers[1]!.answer();
    await next;
    expect(pool.started).toBe(1);
  });
});
