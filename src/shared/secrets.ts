import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

// Secrets at rest (provider api keys, database passwords, private keys): AES-256-GCM under a key
// derived from the master key (docs/running.md#secrets). Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url),
// the version tag leaving room to rotate the scheme. The purpose string is bound as associated
// data, so a ciphertext moved to another column or row kind does not decrypt.

const VERSION = "v1";

function keyFor(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "vecsync secrets v1", 32));
}

export type SecretBox = {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
};

export function secretBox(masterKey: Buffer): SecretBox {
  const key = keyFor(masterKey);
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
    },
    open(sealed, purpose) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("not a sealed secret of a known version");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}
