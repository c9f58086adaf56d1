// The local models' part of `bun run bench embed`: texts/s of local-lexical-v1 and
// local-semantic-v1 on 1 and 2 cores (one worker a core, as the service runs the semantic model),
// one text alone (a query's wait), and retrieval quality on the labelled set (retrieval-set.ts).
//
// Two kinds of text, cycled: short ones of a few words (the hosted bench's, ~12 of the model's
// tokens) and the set's product rows (name, code and description, ~35 tokens). Each rate is taken
// after a warm-up that loads the model in every worker and warms the JIT.
import { createEmbeddingProvider } from "../../../src/drivers/embeddings/index.ts";
import { MODEL_FILES } from "../../../src/drivers/embeddings/local-semantic/assets.ts";
import { JOB_TEXTS, WorkerPool } from "../../../src/drivers/embeddings/local-semantic/pool.ts";
import { Tokenizer, type Vocabulary } from "../../../src/drivers/embeddings/local-semantic/tokenizer.ts";
import { retrievalSet, scoreRanking, type RetrievalSet } from "./retrieval-set.ts";

const LEXICAL_TEXTS = Number(process.env.BENCH_LEXICAL_TEXTS ?? 100_000);
/** ~6 s of short texts and ~30 s of product rows on one core. */
const SEMANTIC_TEXTS = Number(process.env.BENCH_SEMANTIC_TEXTS ?? 1_500);
const MAX_TOKENS = 256;
const MODELS = ["local-lexical-v1", "local-semantic-v1"] as const;

const rssMb = () => Math.round(process.memoryUsage().rss / 2 ** 20);
const WORDS = "order customer shipped invoice blue large refund pending widget account premium delayed north south review".split(" ");
const KINDS = {
  short: (_set: RetrievalSet, i: number) => `item ${i} ${WORDS[i % 15]} ${WORDS[(i * 7) % 15]} ${WORDS[(i * 11) % 15]}`,
  "product row": (set: RetrievalSet, i: number) => set.rows[i % set.rows.length]!.text,
};

async function lexicalRate(texts: string[], workers: number): Promise<number> {
  const pool = Array.from({ length: workers }, () => new Worker(new URL("./lexical-worker.ts", import.meta.url)));
  const run = (w: Worker, part: string[]) =>
    new Promise<number>((resolve) => {
      w.onmessage = (e: MessageEvent<number>) => resolve(e.data);
      w.postMessage(part);
    });
  const share = (i: number) => texts.filter((_, k) => k % workers === i);
  await Promise.all(pool.map((w, i) => run(w, share(i).slice(0, 5_000)))); // warm the JIT
  const started = performance.now();
  await Promise.all(pool.map((w, i) => run(w, share(i))));
  const seconds = (performance.now() - started) / 1000;
  pool.forEach((w) => w.terminate());
  return texts.length / seconds;
}

async function semanticRate(texts: string[], workers: number): Promise<{ rate: number; rssMb: number }> {
  const pool = new WorkerPool(workers);
  try {
    await pool.embed(texts.slice(0, JOB_TEXTS * workers * 2), { maxTokens: MAX_TOKENS, urgent: false }); // loads a model per worker
    const started = performance.now();
    await pool.embed(texts, { maxTokens: MAX_TOKENS, urgent: false });
    return { rate: texts.length / ((performance.now() - started) / 1000), rssMb: rssMb() };
  } finally {
    pool.close();
  }
}

/** Median wall time of one short text embedded on its own by an idle warm worker. */
async function singleTextMs(texts: string[]): Promise<number> {
  const pool = new WorkerPool(1);
  try {
    await pool.embed(texts.slice(0, JOB_TEXTS), { maxTokens: MAX_TOKENS, urgent: true });
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      await pool.embed([texts[i]!], { maxTokens: MAX_TOKENS, urgent: true });
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[15]!;
  } finally {
    pool.close();
  }
}

/** Median and worst wall time of 20 short queries while a backfill's product rows keep the worker busy. */
async function queryDuringFill(set: RetrievalSet): Promise<{ p50: number; max: number }> {
  const pool = new WorkerPool(1);
  try {
    const rows = Array.from({ length: 1_000 }, (_, i) => KINDS["product row"](set, i));
    await pool.embed(rows.slice(0, JOB_TEXTS), { maxTokens: MAX_TOKENS, urgent: false });
    const fill = pool.embed(rows, { maxTokens: MAX_TOKENS, urgent: false });
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      await Bun.sleep(50);
      const started = performance.now();
      await pool.embed([KINDS.short(set, i)], { maxTokens: MAX_TOKENS, urgent: true });
      times.push(performance.now() - started);
    }
    await fill;
    times.sort((a, b) => a - b);
    return { p50: times[10]!, max: times[19]! };
  } finally {
    pool.close();
  }
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((n, x, i) => n + x * b[i]!, 0);

/** Recall@10 and nDCG@10 of each model on the labelled set, by query kind, by brute force. */
async function retrieval(set: RetrievalSet) {
  const local = createEmbeddingProvider({ provider: "local" });
  const out = [];
  for (const model of MODELS) {
    // The service's own path (provider `local`, the shared pool), as a backfill and a query take it.
    const rows = await local.embed(set.rows.map((r) => r.text), { model, dimensions: 512, kind: "document" });
    const queries = await local.embed(set.queries.map((q) => q.text), { model, dimensions: 512, kind: "query" });
    for (const kind of ["paraphrase", "code"] as const) {
      const scores = set.queries.flatMap((q, i) => {
        if (q.kind !== kind) return [];
        const ranked = rows.map((v, k) => ({ id: set.rows[k]!.id, s: dot(queries[i]!, v) })).sort((a, b) => b.s - a.s || a.id - b.id);
        return [scoreRanking(ranked.map((r) => r.id), q.relevant)];
      });
      const mean = (f: (s: (typeof scores)[number]) => number) => +(scores.reduce((n, s) => n + f(s), 0) / scores.length).toFixed(3);
      out.push({ model, queries: `${scores.length} ${kind}`, "recall@10": mean((s) => s.recall), "nDCG@10": mean((s) => s.ndcg) });
    }
  }
  return out;
}

export async function benchLocalModels(): Promise<void> {
  const set = retrievalSet();
  console.log(`local models: texts/s over ${LEXICAL_TEXTS} (lexical) and ${SEMANTIC_TEXTS} (semantic) texts of each kind; rss is the whole process after the run`);
  const tokenizer = new Tokenizer((await Bun.file(MODEL_FILES.vocabulary).json()) as Vocabulary);
  const rates = [];
  for (const [kind, make] of Object.entries(KINDS)) {
    const texts = (n: number) => Array.from({ length: n }, (_, i) => make(set, i));
    const sample = texts(SEMANTIC_TEXTS);
    const label = `${kind} (${(sample.reduce((n, t) => n + tokenizer.encode(t).tokens, 0) / sample.length).toFixed(1)} tokens)`;
    for (const workers of [1, 2]) {
      rates.push({ texts: label, model: MODELS[0], "cores (workers)": workers, "texts/s": Math.round(await lexicalRate(texts(LEXICAL_TEXTS), workers)), "rss MB": null });
      const semantic = await semanticRate(sample, workers);
      rates.push({ texts: label, model: MODELS[1], "cores (workers)": workers, "texts/s": Math.round(semantic.rate), "rss MB": semantic.rssMb });
    }
  }
  console.table(rates);
  const shortTexts = Array.from({ length: 64 }, (_, i) => KINDS.short(set, i));
  console.log(`local-semantic-v1, one short text alone on an idle worker (a query): median ${(await singleTextMs(shortTexts)).toFixed(1)} ms`);
  const during = await queryDuringFill(set);
  console.log(`local-semantic-v1, one short text while a backfill's rows queue on the same worker: median ${during.p50.toFixed(0)} ms, worst of 20 ${during.max.toFixed(0)} ms`);
  console.log("retrieval on the labelled set (brute-force cosine; paraphrase: 10 relevant rows each, code: 1):");
  console.table(await retrieval(set));
}
