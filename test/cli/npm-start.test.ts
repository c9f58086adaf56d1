// `npm start` without --silent, as the README's first command runs it: npm's two banner lines come
// first (npm prints them at every log level but silent, docs/running.md#commands), then the
// service's own lines, and SIGTERM to npm stops it all.
import { expect, setDefaultTimeout, test } from "bun:test";
import { ROOT, tempDir } from "../harness.ts";
import { VERSION } from "../../src/version.ts";

setDefaultTimeout(60_000);

test("npm start shows npm's banner, then the listening line and the service's banner; SIGTERM stops it", async () => {
  using dir = tempDir();
  const npm = Bun.spawn(["npm", "start"], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_PORT: "0", VECSYNC_DATA_DIR: dir.path, VECSYNC_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "ignore",
  });
  try {
    let out = "";
    const decoder = new TextDecoder();
    for await (const chunk of npm.stdout) {
      out += decoder.decode(chunk, { stream: true });
      if (/Ctrl-C stops it\n/.test(out)) break;
    }
    const lines = out.split("\n").filter(Boolean);
    expect(lines.slice(0, 2)).toEqual([`> vecsync@${VERSION} start`, "> exec bun run src/main.ts serve"]);
    expect(lines[2]).toMatch(/^vecsync listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[3]).toBe(`vecsync ${VERSION} · data dir ${dir.path} · API reference ${lines[2]!.slice("vecsync listening on ".length)}/docs · Ctrl-C stops it`);
    npm.kill("SIGTERM");
    expect(await npm.exited).toBe(0);
  } finally {
    npm.kill("SIGKILL");
  }
});
