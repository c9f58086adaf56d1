// The one retry rule the scheduler follows (STYLE 3).
import { describe, expect, test } from "bun:test";
import { AppError, DriverError, isRetryable } from "../../src/shared/errors.ts";

describe("isRetryable", () => {
  test.each([
    ["our own refusal (AppError)", new AppError("not_found", "gone"), false],
    ["a driver error that says retry", new DriverError("timeout", { retryable: true }), true],
    ["a driver error that says stop", new DriverError("bad password", { retryable: false }), false],
    ["an unclassified Error", new Error("boom"), true],
    ["a thrown non-error", "boom", true],
  ])("%s", (_, err, expected) => {
    expect(isRetryable(err)).toBe(expected);
  });
});
