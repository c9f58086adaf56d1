// emb_b: Vertex AI text embeddings, `POST {base}/publishers/google/models/{model}:predict` with
// the key in `x-goog-api-key`. The default base is Vertex AI's global endpoint, the one an API key
// (express mode) reaches without project or location; a project endpoint works as a base too:
// `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`.
import type { WireAnswer, WireBatch, WireFormat } from "./hosted.ts";
import type { UpstreamRequest } from "./http.ts";
import { field, list } from "./parse.ts";

export const EMB_B_DEFAULT_BASE = "https://aiplatform.googleapis.com/v1";

export const embBWire: WireFormat = {
  provider: "emb_b",
  serverTruncates: true,
  request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest {
    const taskType = batch.kind === "query" ? "RETRIEVAL_QUERY" : "RETRIEVAL_DOCUMENT";
    const model = encodeURIComponent(batch.spec.upstreamId);
    return {
      url: `${base.replace(/\/+$/, "")}/publishers/google/models/${model}:predict`,
      headers: { "x-goog-api-key": apiKey },
      body: {
        instances: batch.texts.map((content) => ({ content, task_type: taskType })),
        // Every Vertex text model here takes outputDimensionality; stating it is harmless at full size.
        parameters: { outputDimensionality: batch.dimensions, autoTruncate: true },
      },
    };
  },
  parse(json: unknown): WireAnswer {
    const predictions = list(field(json, "predictions"), "predictions");
    let tokens = 0;
    let counted = true;
    const vectors = predictions.map((p) => {
      const embeddings = field(p, "embeddings");
      const stat = (embeddings as { statistics?: { token_count?: unknown } }).statistics?.token_count;
      if (typeof stat === "number") tokens += stat;
      else counted = false;
      return field(embeddings, "values");
    });
    return { vectors, tokens: counted ? tokens : null };
  },
};
