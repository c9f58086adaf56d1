// Issue 12 (item 10): vecsync.db was created 0644. docs/running.md#one-process: files the service creates in the data
// directory are 0600, folders 0700 — also those an older version left behind.
import { expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startProcess, tempDir } from "../harness.ts";
import { signUp } from "../e2e/helpers.ts";

setDefaultTimeout(30_000);

function modes(root: string, path = root, out: Record<string, number> = {}): Record<string, number> {
  const stat = lstatSync(path);
  out[path === root ? "." : path.slice(root.length + 1)] = stat.mode & 0o777;
  if (stat.isDirectory()) for (const entry of readdirSync(path)) modes(root, join(path, entry), out);
  return out;
}

test("every file the service has in the data dir is 0600 and every folder 0700, old ones tightened at start", async () => {
  using dir = tempDir();
  chmodSync(dir.path, 0o755);
  // What an older version left: a world-readable outbox in a world-readable folder.
  mkdirSync(join(dir.path, "indexes"), { mode: 0o755 });
  writeFileSync(join(dir.path, "outbox.jsonl"), "", { mode: 0o644 });
  chmodSync(join(dir.path, "outbox.jsonl"), 0o644);
  // Not the service's: left as the operator made it.
  writeFileSync(join(dir.path, "notes.txt"), "mine", { mode: 0o644 });
  chmodSync(join(dir.path, "notes.txt"), 0o644);
  await using proc = await startProcess({ dataDir: dir.path });
  await signUp(proc); // writes the outbox, the database and its WAL
  const { "notes.txt": notes, ...found } = modes(dir.path);
  expect(notes!.toString(8)).toBe("644");
  expect(Object.keys(found)).toEqual(expect.arrayContaining([".", "vecsync.db", "vecsync.db-wal", "vecsync.db-shm", "jwt.secret", "master.key", "outbox.jsonl", "lock", "indexes"]));
  for (const [name, mode] of Object.entries(found)) {
    const isDir = lstatSync(join(dir.path, name)).isDirectory();
    expect({ name, mode: mode.toString(8) }).toEqual({ name, mode: isDir ? "700" : "600" });
  }
});
