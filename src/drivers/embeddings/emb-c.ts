// emb_c: the Voyage AI embeddings API, `POST {base}/embeddings` with a bearer key, `input_type`
// document/query (Voyage prepends a retrieval prompt for each) and server-side truncation on.
import type { WireAnswer, WireBatch, WireFormat } from "./hosted.ts";
import type { UpstreamRequest } from "./http.ts";
import { embAWire } from "./emb-a.ts";

export const EMB_C_DEFAULT_BASE = "https://api.voyageai.com/v1";

export const embCWire: WireFormat = {
  provider: "emb_c",
  serverTruncates: true,
  request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest {
    const body: Record<string, unknown> = { input: batch.texts, model: batch.spec.upstreamId, input_type: batch.kind, truncation: true };
    // Always stated when the model takes it: voyage-3.5-lite's own default (1024) differs from
    // the catalog's 512.
    if (batch.spec.reduced.kind !== "none") body.output_dimension = batch.dimensions;
    return { url: `${base.replace(/\/+$/, "")}/embeddings`, headers: { authorization: `Bearer ${apiKey}` }, body };
  },
  // The answer has OpenAI's shape: data[{embedding, index}], usage.total_tokens.
  parse(json: unknown): WireAnswer {
    return embAWire.parse(json);
  },
};
