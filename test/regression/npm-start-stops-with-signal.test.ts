// Issue 12 (item 10): SIGTERM to `npm start` left the server running (npm signals its shell, the
// shell died, bun lived on). docs/running.md#one-process: SIGTERM or SIGINT to npm stops the service within 10 s
// and leaves no process behind.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { eventually, ROOT, tempDir } from "../harness.ts";

setDefaultTimeout(60_000);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every process below `root`, from the parent pids in /proc (Linux, as in CI). */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid …; comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parentOf) if (parent === pid) found.push(child), walk(child);
  };
  walk(root);
  return found;
}

describe.each(["SIGTERM", "SIGINT"] as const)("%s", (signal) => {
  test(`${signal} to npm start stops the server and leaves no process`, async () => {
    using dir = tempDir();
    const npm = Bun.spawn(["npm", "start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, VECSYNC_PORT: "0", VECSYNC_DATA_DIR: dir.path, VECSYNC_LOG_LEVEL: "silent" },
      stdout: "pipe",
      stderr: "ignore",
    });
    let left: number[] = [];
    try {
      let out = "";
      const decoder = new TextDecoder();
      for await (const chunk of npm.stdout) {
        out += decoder.decode(chunk, { stream: true });
        if (/vecsync listening on http:\/\/\S+\n/.test(out)) break;
      }
      expect(out).toMatch(/vecsync listening on http:\/\/127\.0\.0\.1:\d+/);
      const below = descendants(npm.pid); // npm's shell (if any) and the server
      left = below;
      expect(below.length).toBeGreaterThan(0);
      const started = Date.now();
      npm.kill(signal);
      await npm.exited;
      await eventually(() => below.every((pid) => !alive(pid)), 10_000).catch(() => {});
      left = below.filter(alive);
      expect(left).toEqual([]);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const pid of left) if (alive(pid)) process.kill(pid, "SIGKILL");
      npm.kill("SIGKILL");
    }
  });
});
