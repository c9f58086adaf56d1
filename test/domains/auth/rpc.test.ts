// Sign-in over tRPC, through the typed client a TypeScript app would use, on a real socket.
import { describe, expect, test } from "bun:test";
import { TRPCClientError } from "@trpc/client";
import { createVecsyncClient } from "../../../rpc/client.ts";
import { createTestApp } from "../../harness.ts";
import { codeIn, listenOnLoopback, mailsTo } from "./helpers.ts";

/** The `{code, httpStatus}` a failed call carries, as REST would answer it. */
async function failure(call: Promise<unknown>) {
  const err = await call.then(() => null, (e: unknown) => e);
  if (!(err instanceof TRPCClientError)) throw new Error(`expected a TRPCClientError, got ${String(err)}`);
  const data = err.data as { vecsync: { code: string }; httpStatus: number };
  return { code: data.vecsync.code, httpStatus: data.httpStatus };
}

describe("happy", () => {
  test("requestCode → verify → refresh through createVecsyncClient", async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    const client = createVecsyncClient({ url: server.url });
    expect(await client.auth.requestCode.mutate({ email: "Rpc@Example.com" })).toEqual({ message: expect.any(String) });
    const [mail] = await mailsTo(app.config.mailOutbox!, "rpc@example.com", 1);
    const tokens = await client.auth.verify.mutate({ email: "rpc@example.com", code: codeIn(mail!.text) });
    expect(tokens).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 3600, token_type: "bearer" });
    const rotated = await client.auth.refresh.mutate({ refresh_token: tokens.refresh_token });
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(await app.services.authenticator.resolve("jwt", rotated.access_token)).toMatchObject({ email: "rpc@example.com" });
  });
});

describe("errors", () => {
  test("the same codes and statuses as REST", async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    const client = createVecsyncClient({ url: server.url });
    expect(await failure(client.auth.requestCode.mutate({ email: "nope" }))).toEqual({ code: "validation_error", httpStatus: 400 });
    expect(await failure(client.auth.verify.mutate({ email: "nope", code: "123456" }))).toEqual({ code: "invalid_request", httpStatus: 400 });
    expect(await failure(client.auth.verify.mutate({ email: "a@example.com", code: "123456" }))).toEqual({ code: "unauthorized", httpStatus: 401 });
    expect(await failure(client.auth.refresh.mutate({ refresh_token: "vsr_unknown" }))).toEqual({ code: "unauthorized", httpStatus: 401 });
  });

  test("rate limits hold on tRPC too, per e-mail and per client IP, with Retry-After", async () => {
    await using app = await createTestApp({ env: { VECSYNC_OTP_IP_LIMIT: "6" } });
    await using server = listenOnLoopback(app);
    const client = createVecsyncClient({ url: server.url });
    for (let i = 0; i < 5; i++) await client.auth.requestCode.mutate({ email: "rpc-busy@example.com" });
    expect(await failure(client.auth.requestCode.mutate({ email: "rpc-busy@example.com" }))).toEqual({ code: "rate_limited", httpStatus: 429 });
    await client.auth.requestCode.mutate({ email: "sixth@example.com" }); // the IP's sixth counted request
    const raw = await fetch(`${server.url}/trpc/auth.requestCode`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "seventh@example.com" }) });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("wrong codes are limited per client IP on tRPC too (60 an hour)", async () => {
    await using app = await createTestApp();
    await using server = listenOnLoopback(app);
    const client = createVecsyncClient({ url: server.url });
    for (let i = 0; i < 60; i++) {
      expect(await failure(client.auth.verify.mutate({ email: `rpc-victim${i % 30}@example.com`, code: "123456" }))).toEqual({ code: "unauthorized", httpStatus: 401 });
    }
    expect(await failure(client.auth.verify.mutate({ email: "rpc-victim-new@example.com", code: "123456" }))).toEqual({ code: "rate_limited", httpStatus: 429 });
  });
});
