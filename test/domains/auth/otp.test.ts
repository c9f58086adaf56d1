import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { Writable } from "node:stream";
import { users } from "../../../src/domains/auth/tables.ts";
import { FakeClock } from "../../../src/shared/clock.ts";
import { createLogger } from "../../../src/shared/log.ts";
import { createTestApp } from "../../harness.ts";
import { codeIn, errorCode, listenOnLoopback, mailsTo, outbox } from "./helpers.ts";

const MINUTE = 60_000;
const otp = (email: unknown) => ({ body: { email } });

describe("happy", () => {
  test("sends a 6-digit code by e-mail and creates the user, lowercased, named after the local part", async () => {
    await using app = await createTestApp();
    const res = await app.request("POST", "/v1/auth/otp", otp("  Ada.Lovelace@Example.COM "));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: expect.any(String) });
    const [mail] = await mailsTo(app.config.mailOutbox!, "ada.lovelace@example.com", 1);
    expect(mail).toMatchObject({ to: "ada.lovelace@example.com", subject: "Your vecsync sign-in code" });
    expect(mail!.text).toMatch(/\b\d{6}\b/);
    const rows = await app.services.database.db.select().from(users).where(eq(users.email, "ada.lovelace@example.com"));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.name).toBe("ada.lovelace");
  });

  test("a known e-mail keeps its user and gets a fresh code", async () => {
    await using app = await createTestApp();
    await app.request("POST", "/v1/auth/otp", otp("bob@example.com"));
    await app.request("POST", "/v1/auth/otp", otp("BOB@example.com"));
    await mailsTo(app.config.mailOutbox!, "bob@example.com", 2);
    expect(await app.services.database.db.select().from(users)).toHaveLength(1);
    expect(outbox(app.config.mailOutbox!).map((m) => m.to)).toEqual(["bob@example.com", "bob@example.com"]);
  });

  test("the answer is the same in body, status and headers for a known and an unknown e-mail", async () => {
    await using app = await createTestApp();
    await app.request("POST", "/v1/auth/otp", otp("known@example.com"));
    await mailsTo(app.config.mailOutbox!, "known@example.com", 1);
    const shape = async (email: string) => {
      const res = await app.request("POST", "/v1/auth/otp", otp(email));
      const headers = [...res.headers].filter(([name]) => name !== "x-request-id");
      return { status: res.status, headers, body: await res.text() };
    };
    expect(await shape("known@example.com")).toEqual(await shape("stranger@example.com"));
  });

  test("the answer takes about as long for a known as for an unknown e-mail", async () => {
    await using app = await createTestApp();
    const known = Array.from({ length: 12 }, (_, i) => `known${i}@example.com`);
    for (const email of known) await app.request("POST", "/v1/auth/otp", otp(email));
    await mailsTo(app.config.mailOutbox!, known.at(-1)!, 1);
    const timed = async (email: string, mailsBefore: number) => {
      const start = performance.now();
      await app.request("POST", "/v1/auth/otp", otp(email));
      const ms = performance.now() - start;
      await mailsTo(app.config.mailOutbox!, email, mailsBefore + 1); // keep deliveries out of the next timing
      return ms;
    };
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < known.length; i++) {
      a.push(await timed(known[i]!, 1));
      b.push(await timed(`new${i}@example.com`, 0));
    }
    const median = (t: number[]) => t.sort((x, y) => x - y)[t.length >> 1]!;
    // The answer does the same work either way; a loose bound keeps a busy machine quiet.
    expect(Math.abs(median(a) - median(b))).toBeLessThan(Math.max(2, 0.5 * Math.max(median(a), median(b))));
  });

  test("without SMTP the code is also logged, readable despite the logger's redaction", async () => {
    await using app = await createTestApp();
    const lines: string[] = [];
    app.services.logger = createLogger("info", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    await app.request("POST", "/v1/auth/otp", otp("log@example.com"));
    const [mail] = await mailsTo(app.config.mailOutbox!, "log@example.com", 1);
    const code = codeIn(mail!.text);
    expect(lines.some((l) => l.includes(`log@example.com: ${code}`))).toBe(true);
  });
});

describe("errors", () => {
  test.each([["not-an-email"], ["a@b"], ["two@@example.com"], [""], ["sp ace@example.com"]])("malformed e-mail %p → 400 validation_error", async (email) => {
    await using app = await createTestApp();
    const res = await app.request("POST", "/v1/auth/otp", otp(email));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "validation_error", details: [{ path: "email" }] } });
  });

  test.each([[{}], [{ email: 42 }], [{ email: "a@example.com", extra: 1 }]])("body %p → 400 validation_error", async (body) => {
    await using app = await createTestApp();
    const res = await app.request("POST", "/v1/auth/otp", { body });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("validation_error");
  });

  test("a 6th code for one e-mail within 15 minutes → 429 with Retry-After; the window slides", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    for (let i = 0; i < 5; i++) {
      expect((await app.request("POST", "/v1/auth/otp", otp("busy@example.com"))).status).toBe(200);
      clock.advance(MINUTE);
    }
    const refused = await app.request("POST", "/v1/auth/otp", otp("busy@example.com"));
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    // The first request (5 minutes ago) leaves the window 10 minutes from now.
    expect(refused.headers.get("retry-after")).toBe("600");
    expect(await mailsTo(app.config.mailOutbox!, "busy@example.com", 5)).toHaveLength(5);
    // Another e-mail is not affected.
    expect((await app.request("POST", "/v1/auth/otp", otp("calm@example.com"))).status).toBe(200);
    clock.advance(10 * MINUTE);
    expect((await app.request("POST", "/v1/auth/otp", otp("busy@example.com"))).status).toBe(200);
    expect((await app.request("POST", "/v1/auth/otp", otp("busy@example.com"))).status).toBe(429);
  });

  test("a 31st code from one client IP within 15 minutes → 429 with Retry-After", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    await using server = listenOnLoopback(app);
    const post = (email: string) => fetch(`${server.url}/v1/auth/otp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
    for (let i = 0; i < 30; i++) expect((await post(`user${i}@example.com`)).status).toBe(200);
    const refused = await post("one-more@example.com");
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    expect(refused.headers.get("retry-after")).toBe("900");
    clock.advance(15 * MINUTE);
    expect((await post("one-more@example.com")).status).toBe(200);
  });

  test("VECSYNC_OTP_IP_LIMIT raises the per-IP limit", async () => {
    await using app = await createTestApp({ env: { VECSYNC_OTP_IP_LIMIT: "2" } });
    await using server = listenOnLoopback(app);
    const post = (email: string) => fetch(`${server.url}/v1/auth/otp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
    expect((await post("a@example.com")).status).toBe(200);
    expect((await post("b@example.com")).status).toBe(200);
    expect((await post("c@example.com")).status).toBe(429);
  });
});
