// Issue 12: POST /v1/auth/verify had no per-IP limit — 200 wrong codes across 110 e-mails from one
// address were all answered 401. docs/api.md#rate-limits: at most 60 wrong codes per client IP per hour → 429.
import { expect, test } from "bun:test";
import { FakeClock } from "../../src/shared/clock.ts";
import { createTestApp } from "../harness.ts";
import { errorCode, listenOnLoopback } from "../domains/auth/helpers.ts";

test("the 61st wrong code from one client IP within an hour → 429 rate_limited with Retry-After", async () => {
  const clock = new FakeClock();
  await using app = await createTestApp({ clock });
  await using server = listenOnLoopback(app);
  const verify = (email: string) =>
    fetch(`${server.url}/v1/auth/verify`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, code: "123456" }) });
  // Spread over 30 e-mails, each far under its own limit (30 wrong tries a day).
  for (let i = 0; i < 60; i++) expect((await verify(`victim${i % 30}@example.com`)).status).toBe(401);
  const refused = await verify("victim-new@example.com");
  expect(refused.status).toBe(429);
  expect(await errorCode(refused)).toBe("rate_limited");
  expect(refused.headers.get("retry-after")).toBe("3600");
  clock.advance(60 * 60 * 1000);
  expect((await verify("victim-new@example.com")).status).toBe(401);
});
