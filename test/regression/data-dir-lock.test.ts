// Issue 12 (item 10): two processes on one data dir both ran every sync pass and embedded the same
// rows twice. docs/running.md#one-process: an exclusive lock on <data-dir>/lock; a second serve exits 2 naming the
// holder's pid. (That a holder killed with -9 leaves no stale lock is in test/foundation/process.test.ts.)
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, startProcess, tempDir } from "../harness.ts";

setDefaultTimeout(30_000);

function serveOnce(dataDir: string) {
  const out = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--data-dir", dataDir], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_LOG_LEVEL: "silent" },
    timeout: 20_000, // a second process that starts serving is killed here and fails the test
  });
  return { code: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() };
}

test("a second serve on the same data dir exits 2 naming the holder's pid", async () => {
  using dir = tempDir();
  await using first = await startProcess({ dataDir: dir.path });
  const second = serveOnce(dir.path);
  expect(second.code).toBe(2);
  expect(second.stdout).not.toContain("listening");
  expect(second.stderr.trim().split("\n")).toHaveLength(1);
  expect(second.stderr).toContain(`in use by process ${first.proc.pid}`);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
});
