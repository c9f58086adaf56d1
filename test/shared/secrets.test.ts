import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { secretBox } from "../../src/shared/secrets.ts";

const box = secretBox(randomBytes(32));

describe("happy", () => {
  test("a sealed secret opens to the same text and never contains it", () => {
    const sealed = box.seal("sk-live-1234567890", "provider.api_key");
    expect(sealed).not.toContain("sk-live");
    expect(sealed.startsWith("v1.")).toBe(true);
    expect(box.open(sealed, "provider.api_key")).toBe("sk-live-1234567890");
  });

  test("sealing twice gives different ciphertexts (random IV)", () => {
    expect(box.seal("same", "p")).not.toBe(box.seal("same", "p"));
  });
});

describe("errors", () => {
  test("a different purpose, another master key, or a flipped byte does not open", () => {
    const sealed = box.seal("pw", "connection.credentials");
    expect(() => box.open(sealed, "provider.api_key")).toThrow();
    expect(() => secretBox(randomBytes(32)).open(sealed, "connection.credentials")).toThrow();
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString("base64url");
    expect(() => box.open(parts.join("."), "connection.credentials")).toThrow();
    expect(() => box.open("garbage", "connection.credentials")).toThrow("not a sealed secret");
  });
});
