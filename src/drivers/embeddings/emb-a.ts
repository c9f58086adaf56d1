// emb_a: the OpenAI embeddings API, `POST {base}/embeddings` with a bearer key. Any
// OpenAI-compatible server (local model servers, gateways) works through the base URL override.
// The API has no server-side truncation: an input over the model's context is a 400, so the
// shared machinery cuts inputs to max_tokens before sending.
// Vectors are asked for as base64 (as OpenAI's own SDKs do): a quarter of the bytes and no float
// parsing on the event loop. A compatible server that ignores the field answers numbers, which
// parse too; one that refuses it is asked for numbers from then on (hosted.ts, `plain`).
import type { WireAnswer, WireBatch, WireFormat } from "./hosted.ts";
import type { UpstreamRequest } from "./http.ts";
import { field, fromBase64, list, num } from "./parse.ts";

export const EMB_A_DEFAULT_BASE = "https://api.openai.com/v1";

/** The answer's shape, shared with emb_c: data[{embedding, index}], usage.total_tokens or prompt_tokens. */
export function parseEmbAAnswer(json: unknown): WireAnswer {
  const data = list(field(json, "data"), "data");
  // `index` says which input each item answers; servers need not keep order.
  const vectors = new Array<unknown>(data.length);
  for (const item of data) {
    const index = num(field(item, "index"), "data[].index");
    if (!Number.isInteger(index) || index < 0 || index >= data.length || vectors[index] !== undefined) {
      throw new Error(`data[].index ${index} is out of range or repeated`);
    }
    vectors[index] = fromBase64(field(item, "embedding"), "data[].embedding");
  }
  const usage = (json as { usage?: { total_tokens?: unknown; prompt_tokens?: unknown } }).usage;
  const tokens = usage?.total_tokens ?? usage?.prompt_tokens;
  return { vectors, tokens: typeof tokens === "number" ? tokens : null };
}

function embA(encoding: "base64" | "float"): WireFormat {
  return {
    provider: "emb_a",
    serverTruncates: false,
    plain: encoding === "base64" ? embA("float") : undefined,
    request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest {
      const body: Record<string, unknown> = { model: batch.spec.upstreamId, input: batch.texts, encoding_format: encoding };
      // Only when reduced: ada-002 rejects the field, and some compatible servers do not know it.
      if (batch.dimensions !== batch.spec.dimensions) body.dimensions = batch.dimensions;
      return { url: `${base.replace(/\/+$/, "")}/embeddings`, headers: { authorization: `Bearer ${apiKey}` }, body };
    },
    parse: parseEmbAAnswer,
  };
}

export const embAWire = embA("base64");
