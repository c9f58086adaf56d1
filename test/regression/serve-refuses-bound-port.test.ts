// Issue 12 (item 10): a second `serve` on a port in use bound it anyway (Elysia's Bun adapter sets
// SO_REUSEPORT) and the two processes split the requests. docs/running.md#one-process: exit 2 naming the address.
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, startProcess, tempDir } from "../harness.ts";

setDefaultTimeout(30_000);

test("serve on a bound port exits 2 with one line naming the address; the first keeps every request", async () => {
  await using first = await startProcess();
  const port = new URL(first.url).port;
  using dir = tempDir();
  const second = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve", "--port", port, "--data-dir", dir.path], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => second.kill("SIGKILL"), 20_000); // a bound second server never exits
  const code = await second.exited;
  clearTimeout(timer);
  const stderr = await new Response(second.stderr).text();
  expect(code).toBe(2);
  expect(await new Response(second.stdout).text()).not.toContain("listening");
  expect(stderr.trim().split("\n")).toEqual([`vecsync: address 127.0.0.1:${port} is already in use`]);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
});
