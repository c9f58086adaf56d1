import Database from "libsql";
import { getLoadablePath } from "sqlite-vec";

/**
 * A libSQL connection with sqlite-vec loaded. `@libsql/client` cannot load extensions, so the
 * exact-distance path opens the same file through the `libsql` binding it is built on.
 */
export function loadSqliteVec(path: string): Database.Database {
  const db = new Database(path);
  db.loadExtension(getLoadablePath());
  return db;
}
