import { createHash, randomInt, timingSafeEqual } from "node:crypto";

// docs/api.md#authentication: `vsk_` + 40 base62 characters, the last 6 a base62 CRC32 of the rest, so a
// malformed or mistyped key is refused before any database lookup.
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PREFIX = "vsk_";
const BODY_LEN = 34;
const CHECK_LEN = 6;
export const KEY_PREFIX_LEN = 12;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(n: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  let body = "";
  for (let i = 0; i < BODY_LEN; i++) body += BASE62[randomInt(62)];
  return `${PREFIX}${body}${base62(crc32(PREFIX + body), CHECK_LEN)}`;
}

const SHAPE = new RegExp(`^${PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

/** True when the key has our shape and its checksum matches. */
export function isWellFormedApiKey(raw: string): boolean {
  if (!SHAPE.test(raw)) return false;
  const head = raw.slice(0, raw.length - CHECK_LEN);
  return base62(crc32(head), CHECK_LEN) === raw.slice(-CHECK_LEN);
}

export const hashApiKey = (raw: string): string => createHash("sha256").update(raw).digest("hex");
export const keyPrefixOf = (raw: string): string => raw.slice(0, KEY_PREFIX_LEN);

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
