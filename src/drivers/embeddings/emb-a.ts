// emb_a: the OpenAI embeddings API, `POST {base}/embeddings` with a bearer key. Any
// OpenAI-compatible server (local model servers, gateways) works through the base URL override.
// The API has no server-side truncation: an input over the model's context is a 400, so the
// shared machinery cuts inputs to max_tokens before sending.
import type { WireAnswer, WireBatch, WireFormat } from "./hosted.ts";
import type { UpstreamRequest } from "./http.ts";
import { field, list, num } from "./parse.ts";

export const EMB_A_DEFAULT_BASE = "https://api.openai.com/v1";

export const embAWire: WireFormat = {
  provider: "emb_a",
  serverTruncates: false,
  request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest {
    const body: Record<string, unknown> = { model: batch.spec.upstreamId, input: batch.texts, encoding_format: "float" };
    // Only when reduced: ada-002 rejects the field, and some compatible servers do not know it.
    if (batch.dimensions !== batch.spec.dimensions) body.dimensions = batch.dimensions;
    return { url: `${base.replace(/\/+$/, "")}/embeddings`, headers: { authorization: `Bearer ${apiKey}` }, body };
  },
  parse(json: unknown): WireAnswer {
    const data = list(field(json, "data"), "data");
    // `index` says which input each item answers; servers need not keep order.
    const vectors = new Array<unknown>(data.length);
    for (const item of data) {
      const index = num(field(item, "index"), "data[].index");
      if (!Number.isInteger(index) || index < 0 || index >= data.length || vectors[index] !== undefined) {
        throw new Error(`data[].index ${index} is out of range or repeated`);
      }
      vectors[index] = field(item, "embedding");
    }
    const usage = (json as { usage?: { total_tokens?: unknown; prompt_tokens?: unknown } }).usage;
    const tokens = usage?.total_tokens ?? usage?.prompt_tokens;
    return { vectors, tokens: typeof tokens === "number" ? tokens : null };
  },
};
