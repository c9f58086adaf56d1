// What the service and the model's worker say to each other (pool.ts ⇄ worker.ts), and where the
// worker is found.

/**
 * The worker's entry point, relative to `src/`. Under `bun run` it is resolved next to this file;
 * in the compiled binary, Bun looks it up among the binary's entry points by this path, relative to
 * their common root (`src/`): scripts/build.ts lists it and checks that it still exists.
 */
export const WORKER_ENTRY = "drivers/embeddings/local-semantic/worker.ts";

/** The model's vector size: every vector it gives is this long and of unit length. */
export const DIMENSIONS = 512;

/** Texts to embed as one job; the worker answers with one vector per text, in order. */
export type JobRequest = { id: number; texts: string[]; maxTokens: number };

export type JobReply =
  | {
      id: number;
      ok: true;
      /** texts × 512 float32, one unit vector after another. */
      vectors: Float32Array;
      /** Tokens the model read, summed over the texts (after cuts). */
      tokens: number;
      /** Texts cut at maxTokens. */
      truncated: number;
    }
  /** `stage` load: the model could not be loaded (no use trying again); run: this job failed. */
  | { id: number; ok: false; stage: "load" | "run"; message: string };
