// Issue 12 (item 7): when the log could not be written (its disk full: ENOSPC), pino's destination
// threw from inside the request that logged, and the process exited. Logging must never kill it.
import { expect, test } from "bun:test";
import { startProcess } from "../harness.ts";

test("with stderr on a full device (/dev/full) the service starts, answers and stays up", async () => {
  await using proc = await startProcess({ stderrTo: "/dev/full", env: { VECSYNC_LOG_LEVEL: "info" } });
  // Every request writes an access-log line; each write fails with ENOSPC.
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${proc.url}/v1/auth/otp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: `log${i}@example.com` }) });
    expect(res.status).toBe(200);
  }
  expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
  expect(proc.proc.exitCode).toBeNull();
  expect(await proc.stop("SIGTERM")).toBe(0);
});
