import { createHmac, hkdfSync, randomInt, timingSafeEqual } from "node:crypto";

// docs/api.md#sign-in: 6-digit single-use codes, kept only as an HMAC under a key derived from the master
// key, so a leaked database does not reveal live codes (1e6 codes are trivial to hash otherwise).
export const CODE_DIGITS = 6;
export const CODE_TTL_MS = 10 * 60 * 1000;
export const MAX_TRIES_PER_CODE = 5;

const MAX_EMAIL_LENGTH = 254; // RFC 5321 path limit
// Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is the mail's job.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const CODE_SHAPE = /^\d{6,8}$/; // docs/api.md#limits: verification codes are 6-8 digits

/** Lowercased and trimmed, or null when it is not shaped like an e-mail address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length <= MAX_EMAIL_LENGTH && EMAIL_SHAPE.test(email) ? email : null;
}

export const isWellFormedCode = (code: string): boolean => CODE_SHAPE.test(code);

export function generateCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
}

const keys = new WeakMap<Buffer, Buffer>();

function otpKey(masterKey: Buffer): Buffer {
  let key = keys.get(masterKey);
  if (!key) {
    key = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "vecsync otp v1", 32));
    keys.set(masterKey, key);
  }
  return key;
}

/** The stored form of a code; bound to the e-mail so a hash copied to another row is useless. */
export function hashCode(masterKey: Buffer, email: string, code: string): string {
  return createHmac("sha256", otpKey(masterKey)).update(`${email}\n${code}`).digest("hex");
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
