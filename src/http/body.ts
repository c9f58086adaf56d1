import { AppError, validationError } from "../shared/errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024; // docs/api.md#errors: bodies over 1 MiB → 413
export const MAX_JSON_DEPTH = 32;

const tooLarge = () => new AppError("payload_too_large", `The request body is larger than ${MAX_BODY_BYTES} bytes`);

/** Reads the body without ever holding more than the limit, even when Content-Length lies or is absent. */
export async function readLimited(request: Request): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH || value === null || typeof value !== "object") return depth;
  let max = depth + 1;
  for (const child of Object.values(value)) {
    max = Math.max(max, depthOf(child, depth + 1));
    if (max > MAX_JSON_DEPTH) break;
  }
  return max;
}

/** The JSON body, or `undefined` when there is none. Malformed or too deep → 400, too big → 413. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const bytes = await readLimited(request);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw validationError([{ path: "", message: `is not valid JSON (${(err as Error).message})` }], "The request body is malformed");
  }
  if (depthOf(value) > MAX_JSON_DEPTH) {
    throw validationError([{ path: "", message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }], "The request body is too deep");
  }
  return value;
}
