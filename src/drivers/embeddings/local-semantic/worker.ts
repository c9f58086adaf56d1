// The worker thread that runs `local-semantic-v1` (pool.ts starts it). It loads the model on its
// first job, once, and then answers jobs one at a time, so the service's event loop never runs
// the model. A failed load is answered to every job (the files are the same next time); a failed
// run is answered to its job, and the pool replaces this worker (its WASM heap may be broken).
import { SentenceEncoder } from "./model.ts";
import { DIMENSIONS, type JobReply, type JobRequest } from "./protocol.ts";

declare const self: Worker;

/**
 * Token positions in one run of the graph, padding included: every text of a run is padded to
 * its longest, and attention's memory grows with the square of that length. The pool's jobs
 * already hold few long texts (JOB_CHARS); this bounds a run whatever a job holds: 16 texts of 256
 * tokens took the process to ~440 MB, while short texts still go 32 at a time, where the rate
 * stops improving (measured on the labelled set's rows, 35 tokens: flat from 16 to 64).
 */
const MAX_BATCH_TOKENS = 4096;

let encoder: Promise<SentenceEncoder> | null = null;

/** Runs of the graph over `lists` in their order, each within MAX_BATCH_TOKENS. */
function runs(lists: number[][]): number[][][] {
  const out: number[][][] = [];
  let run: number[][] = [];
  let longest = 0;
  for (const ids of lists) {
    const next = Math.max(longest, ids.length);
    if (run.length > 0 && next * (run.length + 1) > MAX_BATCH_TOKENS) {
      out.push(run);
      run = [];
    }
    longest = run.length === 0 ? ids.length : next;
    run.push(ids);
  }
  if (run.length > 0) out.push(run);
  return out;
}

async function answer(job: JobRequest, model: SentenceEncoder): Promise<Extract<JobReply, { ok: true }>> {
  const encoded = job.texts.map((text) => model.tokenizer.encode(text, job.maxTokens));
  const vectors = new Float32Array(job.texts.length * DIMENSIONS);
  let offset = 0;
  // A text of symbols the vocabulary does not know still reads as the unknown piece, never as nothing.
  for (const run of runs(encoded.map((e) => (e.ids.length > 0 ? e.ids : [0])))) {
    const out = await model.embed(run);
    vectors.set(out, offset);
    offset += out.length;
  }
  return {
    id: job.id,
    ok: true,
    vectors,
    tokens: encoded.reduce((n, e) => n + e.tokens, 0),
    truncated: encoded.filter((e) => e.truncated).length,
  };
}

self.onmessage = async (event: MessageEvent<JobRequest>) => {
  const job = event.data;
  let model: SentenceEncoder;
  try {
    model = await (encoder ??= SentenceEncoder.load());
  } catch (err) {
    postMessage({ id: job.id, ok: false, stage: "load", message: (err as Error).message ?? String(err) } satisfies JobReply);
    return;
  }
  try {
    const reply = await answer(job, model);
    self.postMessage(reply, [reply.vectors.buffer as ArrayBuffer]);
  } catch (err) {
    postMessage({ id: job.id, ok: false, stage: "run", message: (err as Error).message ?? String(err) } satisfies JobReply);
  }
};
