import { randomBytes } from "node:crypto";

// docs/api.md#conventions: random (never time-ordered) lowercase ids; the first 8 characters must be random
// because vector-store collection names embed them.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lowercase

/** 26 characters of base32 = 130 bits, 128 of them random. */
export function newId(): string {
  const bytes = randomBytes(26);
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export const ID_PATTERN = /^[0-9a-z]{16,64}$/;
