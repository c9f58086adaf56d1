// The Universal Sentence Encoder lite on tfjs's WASM backend: loaded from the files assets.ts
// names, run on batches of token ids. Runs in the model's worker (worker.ts), never on the
// service's event loop.
//
// - tfjs is loaded through its CommonJS node builds, each by path. The packages also ship ESM
//   builds ("module"), and a bundle that mixes the two holds two tfjs engines: the WASM backend
//   registers with one while the model runs on the other, which has no backend.
// - The graph takes a sparse batch: `indices` [n, 2] = (text, position) and `values` [n] = token
//   id, both int32; it answers [texts, 512], L2-normalised by its last op.
// - The WASM heap only grows (Emscripten never gives memory back): the process holds ~190 MB once
//   the model is loaded, and grew to 420-780 MB after long texts in batches of 16 or more. Hence
//   one model per worker, loaded once, and long texts a few at a time (pool.ts JOB_CHARS,
//   worker.ts MAX_BATCH_TOKENS): ~210 MB after 256-token texts.
import * as tf from "@tensorflow/tfjs-core/dist/tf-core.node.js";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.node.js";
import { loadGraphModel, type GraphModel } from "@tensorflow/tfjs-converter/dist/tf-converter.node.js";
import { MODEL_FILES } from "./assets.ts";
import { Tokenizer, type Vocabulary } from "./tokenizer.ts";

type ModelJson = { modelTopology: object; weightsManifest: { paths: string[]; weights: tf.io.WeightsManifestEntry[] }[] };

async function readWeights(manifest: ModelJson["weightsManifest"]): Promise<{ specs: tf.io.WeightsManifestEntry[]; data: ArrayBuffer }> {
  const paths = manifest.flatMap((group) => group.paths);
  const parts = await Promise.all(
    paths.map((name) => {
      const path = MODEL_FILES.shards[name];
      if (!path) throw new Error(`local-semantic-v1: weight shard ${name} is not among the model's files`);
      return Bun.file(path).bytes();
    }),
  );
  const data = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    data.set(part, offset);
    offset += part.byteLength;
  }
  return { specs: manifest.flatMap((group) => group.weights), data: data.buffer };
}

async function startBackend(): Promise<void> {
  // The threaded build would want worker threads of its own; one worker is one core here.
  tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
  const { plain, simd } = MODEL_FILES.wasm;
  setWasmPaths({ "tfjs-backend-wasm.wasm": plain, "tfjs-backend-wasm-simd.wasm": simd, "tfjs-backend-wasm-threaded-simd.wasm": simd });
  if (!(await tf.setBackend("wasm"))) throw new Error("local-semantic-v1: tfjs's WASM backend did not start");
  await tf.ready();
}

export class SentenceEncoder {
  private constructor(
    private readonly model: GraphModel,
    readonly tokenizer: Tokenizer,
  ) {}

  static async load(): Promise<SentenceEncoder> {
    await startBackend();
    const [json, vocabulary] = await Promise.all([Bun.file(MODEL_FILES.model).json() as Promise<ModelJson>, Bun.file(MODEL_FILES.vocabulary).json() as Promise<Vocabulary>]);
    const { specs, data } = await readWeights(json.weightsManifest);
    const handler: tf.io.IOHandler = { load: async () => ({ modelTopology: json.modelTopology, weightSpecs: specs, weightData: data }) };
    const model = await loadGraphModel(handler);
    return new SentenceEncoder(model, new Tokenizer(vocabulary));
  }

  /** Unit vectors of the given token-id lists (none empty), one after another in one array. */
  async embed(batch: number[][]): Promise<Float32Array> {
    const total = batch.reduce((n, ids) => n + ids.length, 0);
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    for (let text = 0; text < batch.length; text++) {
      const ids = batch[text]!;
      for (let pos = 0; pos < ids.length; pos++, k++) {
        indices[2 * k] = text;
        indices[2 * k + 1] = pos;
        values[k] = ids[pos]!;
      }
    }
    const inputs = { indices: tf.tensor2d(indices, [total, 2], "int32"), values: tf.tensor1d(values, "int32") };
    try {
      // executeAsync: the graph has ops of data-dependent shape (Where), which execute refuses.
      const out = (await this.model.executeAsync(inputs)) as tf.Tensor;
      try {
        return (await out.data()) as Float32Array;
      } finally {
        out.dispose();
      }
    } finally {
      inputs.indices.dispose();
      inputs.values.dispose();
    }
  }
}
