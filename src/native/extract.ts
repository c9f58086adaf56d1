// Writes an embedded engine's native files out of the binary onto the real filesystem, where the
// dynamic loader can open them: dlopen cannot read the binary's internal `/$bunfs/` paths, and
// DuckDB's addon finds its `libduckdb.so` through `$ORIGIN`, so the files of one engine go side
// by side into one directory named after their content hash. A later start finds them there.
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { EmbeddedEngine } from "./embedded.ts";

// Written last, after every file is in place: its presence means the directory is complete.
const COMPLETE_MARKER = ".complete";

/**
 * Where extracted files may live, most preferred first. The environment is read here and not in
 * config.ts because the addons load while modules are imported, before any config exists; these
 * are the platform's cache conventions, not vecsync settings.
 */
function cacheRoots(): { path: string; shared: boolean }[] {
  const roots: { path: string; shared: boolean }[] = [];
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg) roots.push({ path: join(xdg, "vecsync"), shared: false });
  const home = process.env.HOME || safeHomedir();
  if (home) roots.push({ path: join(home, ".cache", "vecsync"), shared: false });
  // The temp dir is shared with other users: one directory per user, checked before use.
  const uid = process.getuid?.() ?? "user";
  roots.push({ path: join(tmpdir(), `vecsync-${uid}`), shared: true });
  return roots;
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}

/**
 * In a directory others can write to, someone could plant a library we would then load: only use
 * one that is ours and closed to group and others.
 */
function assertPrivate(dir: string): void {
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a private directory owned by this user`);
  }
}

function isComplete(dir: string, engine: EmbeddedEngine): boolean {
  try {
    statSync(join(dir, COMPLETE_MARKER));
    return engine.files.every((f) => statSync(join(dir, f.name)).size === f.sizeBytes);
  } catch {
    return false;
  }
}

/**
 * Each file is written under a name of its own and renamed into place, so concurrent first starts
 * never see (or load) a half-written file: rename is atomic, and the last one simply wins with
 * identical bytes.
 */
function writeAtomically(path: string, data: Uint8Array, mode: number): void {
  const temp = `${path}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    writeFileSync(temp, data, { mode });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

function extractInto(dir: string, engine: EmbeddedEngine): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of engine.files) {
    writeAtomically(join(dir, file.name), readFileSync(file.path), 0o755);
  }
  writeAtomically(join(dir, COMPLETE_MARKER), new TextEncoder().encode(`${engine.version}\n`), 0o644);
}

/**
 * Returns a directory holding the engine's files, extracting them on first use. Tries each cache
 * root in turn (a read-only home falls through to the temp dir).
 */
export function extractEngine(name: string, engine: EmbeddedEngine): string {
  const failures: string[] = [];
  for (const root of cacheRoots()) {
    const dir = join(root.path, "native", `${name}-${engine.version}-${engine.hash}`);
    try {
      if (root.shared) {
        mkdirSync(root.path, { recursive: true, mode: 0o700 });
        assertPrivate(root.path);
      }
      if (!isComplete(dir, engine)) extractInto(dir, engine);
      return dir;
    } catch (err) {
      failures.push(`${root.path}: ${(err as Error).message}`);
    }
  }
  throw new Error(`cannot write the ${name} native files to any cache directory (${failures.join("; ")})`);
}
