import Database from "libsql";
import { getLoadablePath } from "sqlite-vec";

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
