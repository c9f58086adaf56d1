// emb_c: the Voyage AI embeddings API, `POST {base}/embeddings` with a bearer key, `input_type`
// document/query (Voyage prepends a retrieval prompt for each) and server-side truncation on.
// Vectors come as base64 (`encoding_format`, a NumPy float32 array), as for emb_a.
import type { WireBatch, WireFormat } from "./hosted.ts";
import type { UpstreamRequest } from "./http.ts";
import { parseEmbAAnswer } from "./emb-a.ts";

export const EMB_C_DEFAULT_BASE = "https://api.voyageai.com/v1";

function embC(base64: boolean): WireFormat {
  return {
    provider: "emb_c",
    serverTruncates: true,
    plain: base64 ? embC(false) : undefined,
    request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest {
      const body: Record<string, unknown> = { input: batch.texts, model: batch.spec.upstreamId, input_type: batch.kind, truncation: true };
      // Voyage's default (null) is JSON numbers; "base64" is its only other value.
      if (base64) body.encoding_format = "base64";
      // Always stated when the model takes it: voyage-3.5-lite's own default (1024) differs from
      // the catalog's 512.
      if (batch.spec.reduced.kind !== "none") body.output_dimension = batch.dimensions;
      return { url: `${base.replace(/\/+$/, "")}/embeddings`, headers: { authorization: `Bearer ${apiKey}` }, body };
    },
    // The answer has OpenAI's shape: data[{embedding, index}], usage.total_tokens.
    parse: parseEmbAAnswer,
  };
}

export const embCWire = embC(true);
