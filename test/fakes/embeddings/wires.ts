// The three wire formats as the fake providers read and answer them.
import type { FakeProvider } from "./upstream.ts";

export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A request decoded to what every provider has in common. */
export type Decoded = { model: string; texts: string[]; kind: string; dims: number | null; truncate: boolean; key: string | null; base64: boolean };

type Json = Record<string, unknown>;

const bearer = (req: Request) => req.headers.get("authorization")?.replace(/^Bearer\s+/i, "") ?? null;

function strings(value: unknown, what: string): string[] {
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.some((t) => typeof t !== "string")) throw new FakeHttpError(400, `'${what}' must be a string or a list of strings`);
  return list as string[];
}

export function decode(provider: FakeProvider, req: Request, path: string, body: Json): Decoded {
  if (provider === "emb_b") {
    const m = /^\/v1\/publishers\/google\/models\/([^/:]+):predict$/.exec(path);
    if (!m) throw new FakeHttpError(404, `Unknown path ${path}`);
    const instances = body.instances;
    if (!Array.isArray(instances)) throw new FakeHttpError(400, "Invalid JSON payload: 'instances' is required");
    const params = (body.parameters ?? {}) as Json;
    const kinds = new Set(instances.map((i: Json) => String(i.task_type ?? "RETRIEVAL_QUERY")));
    return {
      model: decodeURIComponent(m[1]!),
      texts: instances.map((i: Json) => String(i.content ?? "")),
      kind: [...kinds].join(","),
      dims: typeof params.outputDimensionality === "number" ? params.outputDimensionality : null,
      truncate: params.autoTruncate !== false,
      key: req.headers.get("x-goog-api-key"),
      base64: false,
    };
  }
  if (path !== "/v1/embeddings") throw new FakeHttpError(404, `Unknown path ${path}`);
  if (provider === "emb_a") {
    return {
      model: String(body.model),
      texts: strings(body.input, "input"),
      kind: "none",
      dims: typeof body.dimensions === "number" ? body.dimensions : null,
      truncate: false,
      key: bearer(req),
      base64: body.encoding_format === "base64",
    };
  }
  return {
    model: String(body.model),
    texts: strings(body.input, "input"),
    kind: String(body.input_type ?? "none"),
    dims: typeof body.output_dimension === "number" ? body.output_dimension : null,
    truncate: body.truncation !== false,
    key: bearer(req),
    base64: body.encoding_format === "base64",
  };
}

/** A vector as OpenAI and Voyage send it for `encoding_format: "base64"`: its float32 values, little-endian. A null (the nonNumeric switch) becomes NaN. */
function base64Of(vector: number[]): string {
  return Buffer.from(Float32Array.from(vector, (x) => x ?? NaN).buffer).toString("base64");
}

export function encode(provider: FakeProvider, model: string, vectors: number[][], tokens: number[], opts: { shuffle: boolean; base64: boolean }): Json {
  const total = tokens.reduce((a, b) => a + b, 0);
  if (provider === "emb_b") {
    return {
      predictions: vectors.map((values, i) => ({ embeddings: { values, statistics: { token_count: tokens[i], truncated: false } } })),
      metadata: { billableCharacterCount: total * 4 },
    };
  }
  const data = vectors.map((embedding, index) => ({ object: "embedding", embedding: opts.base64 ? base64Of(embedding) : embedding, index }));
  if (opts.shuffle) data.reverse();
  const usage = provider === "emb_a" ? { prompt_tokens: total, total_tokens: total } : { total_tokens: total };
  return { object: "list", data, model, usage };
}

const GOOGLE_STATUS: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };

/** Each provider's own error body shape. */
export function errorBody(provider: FakeProvider, status: number, message: string): Json {
  if (provider === "emb_b") return { error: { code: status, message, status: GOOGLE_STATUS[status] ?? "UNKNOWN" } };
  if (provider === "emb_c") return { detail: message };
  const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
  const code = status === 401 ? "invalid_api_key" : status === 429 ? "rate_limit_exceeded" : null;
  return { error: { message, type, param: null, code } };
}
