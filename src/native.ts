import Database from "libsql";
import { getLoadablePath } from "sqlite-vec";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embedded } from "./native/embedded.ts";

// Under `bun run` these load from node_modules; in the compiled binary scripts/build rewrites the
// packages to load the copies embedded in it (src/native/load.ts), so callers never branch.

/**
 * A libSQL connection with sqlite-vec loaded. `@libsql/client` cannot load extensions, so the
 * exact-distance path opens the same file through the `libsql` binding it is built on.
 */
export function loadSqliteVec(path: string): Database.Database {
  const db = new Database(path);
  db.loadExtension(getLoadablePath());
  return db;
}

/** The usearch package's version (its addon has no query for it through the JS wrapper). */
export function usearchVersion(): string {
  return embedded?.engines.usearch.version ?? installedVersion("usearch");
}

function installedVersion(pkg: string): string {
  let dir = dirname(Bun.resolveSync(pkg, import.meta.dir));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === pkg && parsed.version) return parsed.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json found for ${pkg}`);
    dir = dirname(dir);
  }
}
