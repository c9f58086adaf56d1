// Sign-in limits under a burst (docs/security.md#sign-in-limits). Each limit used to be checked by a
// read and recorded by a later write: the calls of a tRPC batch, or concurrent requests queued
// behind a long write, all passed the read before any write landed. One batch of 200 verifies
// signed in at its 150th guess. Here the burst is made certain: the database's write slot is held
// while the requests arrive, so every one of them has read before any has written.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { otpCodes } from "../../src/domains/auth/tables.ts";
import { FakeClock } from "../../src/shared/clock.ts";
import { MAX_BATCH_CALLS } from "../../rpc/router.ts";
import { MAX_BATCH_CALLS as CLIENT_MAX_BATCH_CALLS } from "../../rpc/client.ts";
import { createTestApp, type TestApp } from "../harness.ts";
import { latestCode, listenOnLoopback, outbox, requestCode } from "../domains/auth/helpers.ts";

const wrong = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0");

/** Runs `burst` while the write slot is held, then lets the writes through in arrival order. */
async function withWritesHeld<T>(app: TestApp, burst: () => Promise<T>[]): Promise<T[]> {
  const tx = await app.services.database.client.transaction("write");
  const calls = burst();
  await Bun.sleep(200); // let every call reach the write slot (only the old code needed the time)
  await tx.commit();
  return Promise.all(calls);
}

const statuses = (answers: Response[]) => answers.map((r) => r.status);
const count = (list: number[], status: number) => list.filter((s) => s === status).length;

describe("verify", () => {
  test("40 concurrent REST verifies, the right code at #35: no token; 30 wrong tries (the e-mail's day), the rest 429; the code tried at most 5 times", async () => {
    await using app = await createTestApp();
    const email = "burst@example.com";
    const code = await requestCode(app, email);
    const bodies = Array.from({ length: 40 }, (_, i) => ({ email, code: i === 34 ? code : wrong(code, i) }));
    const answers = await withWritesHeld(app, () => bodies.map((body) => app.request("POST", "/v1/auth/verify", { body })));
    const list = statuses(answers);
    expect(count(list, 200)).toBe(0);
    expect(count(list, 401)).toBe(30);
    expect(count(list, 429)).toBe(10);
    // The 5th wrong try voided the code: the right one, sent now, finds none (and the day is used up).
    expect(await app.services.database.db.select().from(otpCodes).where(eq(otpCodes.email, email))).toEqual([]);
    expect((await app.request("POST", "/v1/auth/verify", { body: { email, code } })).status).toBe(429);
  });

  test("tries race the code's own limit: 11 concurrent wrong codes and then the right one → no token, the code void after its 5th try", async () => {
    await using app = await createTestApp();
    const email = "racer@example.com";
    const code = await requestCode(app, email);
    const codes = [...Array.from({ length: 11 }, (_, i) => wrong(code, i)), code];
    const answers = await withWritesHeld(app, () => codes.map((c) => app.request("POST", "/v1/auth/verify", { body: { email, code: c } })));
    expect(statuses(answers)).toEqual(codes.map(() => 401));
    expect(await app.services.database.db.select().from(otpCodes).where(eq(otpCodes.email, email))).toEqual([]);
    const fresh = await requestCode(app, email);
    expect((await app.request("POST", "/v1/auth/verify", { body: { email, code: fresh } })).status).toBe(200);
  });

  test("a right code does not count as a wrong try: 29 wrong and a right one leave the day's 30th wrong try", async () => {
    const clock = new FakeClock();
    await using app = await createTestApp({ clock });
    const email = "steady@example.com";
    const verify = (code: string) => app.request("POST", "/v1/auth/verify", { body: { email, code } });
    for (let round = 0; round < 6; round++) {
      const code = await requestCode(app, email);
      for (let i = 0; i < (round < 5 ? 5 : 4); i++) expect((await verify(wrong(code, i))).status).toBe(401); // 5 × 5 + 4 = 29
      if (round === 5) expect((await verify(code)).status).toBe(200);
      clock.advance(16 * 60_000); // past the otp window (5 codes per 15 minutes)
    }
    const code = await requestCode(app, email);
    expect((await verify(wrong(code, 0))).status).toBe(401);
    expect((await verify(wrong(code, 1))).status).toBe(429);
  });
});

describe("request code", () => {
  test("10 concurrent REST requests for one e-mail: 5 answered, 5 refused, 5 e-mails", async () => {
    await using app = await createTestApp();
    const email = "flood@example.com";
    const answers = await withWritesHeld(app, () => Array.from({ length: 10 }, () => app.request("POST", "/v1/auth/otp", { body: { email } })));
    expect(count(statuses(answers), 200)).toBe(5);
    expect(count(statuses(answers), 429)).toBe(5);
    await Bun.sleep(300); // deliveries run after the answers
    expect(outbox(app.config.mailOutbox!).filter((m) => m.to === email)).toHaveLength(5);
    expect(latestCode(app.config.mailOutbox!, email)).toMatch(/^\d{6}$/);
  });
});

describe("tRPC batches", () => {
  async function batch(url: string, paths: string[], inputs: unknown[]) {
    const body = Object.fromEntries(inputs.map((input, i) => [String(i), input]));
    const res = await fetch(`${url}/trpc/${paths.join(",")}?batch=1`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { error?: { data: { vecsync: { code: string } } } }[] };
  }

  test("a batch of 40 verifies with the right code at #35 is refused whole: no token, no try counted", async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    const email = "batch@example.com";
    const code = await requestCode(app, email);
    const inputs = Array.from({ length: 40 }, (_, i) => ({ email, code: i === 34 ? code : wrong(code, i) }));
    const answer = await batch(server.url, inputs.map(() => "auth.verify"), inputs);
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).not.toContain("access_token");
    const [stored] = await app.services.database.db.select().from(otpCodes).where(eq(otpCodes.email, email));
    expect(stored?.failedAttempts).toBe(0);
    expect((await app.request("POST", "/v1/auth/verify", { body: { email, code } })).status).toBe(200);
  });

  test("an auth call beside another in a batch → 400 validation_error for each; no e-mail sent", async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    const inputs = Array.from({ length: 10 }, () => ({ email: "victim@example.com" }));
    const answer = await batch(server.url, inputs.map(() => "auth.requestCode"), inputs);
    expect(answer.status).toBe(400);
    expect(answer.body.map((a) => a.error?.data.vecsync.code)).toEqual(inputs.map(() => "validation_error"));
    await Bun.sleep(200);
    expect(outbox(app.config.mailOutbox!).filter((m) => m.to === "victim@example.com")).toHaveLength(0);
  });

  test(`a batch of more than ${MAX_BATCH_CALLS} calls → 400; ${MAX_BATCH_CALLS} are served; the typed client sends no more`, async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    expect(CLIENT_MAX_BATCH_CALLS).toBe(MAX_BATCH_CALLS);
    const over = await fetch(`${server.url}/trpc/${Array(MAX_BATCH_CALLS + 1).fill("health").join(",")}?batch=1`);
    expect(over.status).toBe(400);
    const within = await fetch(`${server.url}/trpc/${Array(MAX_BATCH_CALLS).fill("health").join(",")}?batch=1`);
    expect(within.status).toBe(200);
  });
});
