import { describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { closeSync, openSync } from "node:fs";
import { createLogger, fdDestination } from "../../src/shared/log.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: createLogger("info", stream as never) };
}

describe("happy", () => {
  test("one JSON object per event, with level label and ISO time", () => {
    const { lines, logger } = capture();
    logger.info({ request_id: "r1", org_id: "o1" }, "hello");
    expect(lines[0]).toMatchObject({ level: "info", msg: "hello", request_id: "r1", org_id: "o1" });
    expect(String(lines[0]!.time)).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("secrets are censored wherever they appear", () => {
    const { lines, logger } = capture();
    logger.info({ api_key: "vsk_live", credentials: { password: "hunter2" }, provider: { api_key: "sk-1" }, headers: { authorization: "Bearer x" } }, "redact");
    const text = JSON.stringify(lines[0]);
    for (const secret of ["vsk_live", "hunter2", "sk-1", "Bearer x"]) expect(text).not.toContain(secret);
    expect(lines[0]!.api_key).toBe("[redacted]");
  });
});

describe("errors", () => {
  test("a log that cannot be written (ENOSPC on /dev/full) is dropped, never thrown", () => {
    const fd = openSync("/dev/full", "w");
    try {
      const destination = fdDestination(fd);
      const logger = createLogger("info", destination);
      for (let i = 0; i < 3; i++) logger.error({ attempt: i }, "disk is full");
      expect(destination.dropped()).toBe(3);
    } finally {
      closeSync(fd);
    }
  });
});
