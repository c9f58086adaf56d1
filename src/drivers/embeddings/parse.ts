// Small checked accessors for provider answers: a wrong shape becomes a message, not a TypeError.

export function field(value: unknown, name: string): unknown {
  if (typeof value !== "object" || value === null || !(name in value)) throw new Error(`"${name}" is missing`);
  return (value as Record<string, unknown>)[name];
}

export function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`"${what}" is not a list`);
  return value;
}

export function num(value: unknown, what: string): number {
  if (typeof value !== "number") throw new Error(`"${what}" is not a number`);
  return value;
}

/**
 * An embedding sent as `encoding_format: "base64"` (OpenAI, Voyage): the float32 values,
 * little-endian — the byte order of every target we build (linux-x64; arm64 is little-endian too).
 * Anything else is returned as it came, for the caller's checks (a server that ignores the field
 * answers JSON numbers). Decoding ~4 MB of base64 costs a few ms where JSON.parse of the same
 * vectors as numbers took ~20 ms on the event loop (2,048 × 256).
 */
export function fromBase64(value: unknown, what: string): unknown {
  if (typeof value !== "string") return value;
  const bytes = Buffer.from(value, "base64");
  if (bytes.length % 4 !== 0) throw new Error(`"${what}" is base64 of ${bytes.length} bytes, not of float32 values`);
  const out = new Float32Array(bytes.length / 4);
  new Uint8Array(out.buffer).set(bytes); // a copy: Buffer's pooled bytes need not be 4-aligned
  return out;
}
