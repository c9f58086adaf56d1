// A worker for `bun run bench embed`: computes local-lexical-v1 vectors of the texts it is sent
// and answers how long that took, so the lexical model is timed on 1 and 2 cores like the
// semantic one (which runs in workers in the service too).
import { lexicalVector } from "../../../src/drivers/embeddings/local.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<string[]>) => {
  const started = performance.now();
  for (const text of event.data) lexicalVector(text, 512);
  postMessage(performance.now() - started);
};
