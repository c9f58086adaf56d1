// Drizzle builds a query's SQL on every call, and for a wide table that costs more than running
// it: ~500 µs to build `select … from vector_tables where org_id = ? and id = ?` against ~80 µs to
// execute it (issue 16, measured in process). The queries every request runs (its key's actor, its
// table, its provider) are therefore built once per database handle or transaction, with
// placeholders, and only executed afterwards.
import type { Executor } from "./executor.ts";

const built = new WeakMap<object, Map<string, unknown>>();

/** `build(db)`'s result, made once per executor and name. `build` must use sql.placeholder for every value. */
export function preparedOn<T>(db: Executor, name: string, build: (db: Executor) => T): T {
  let mine = built.get(db);
  if (!mine) built.set(db, (mine = new Map()));
  let statement = mine.get(name) as T | undefined;
  if (statement === undefined) mine.set(name, (statement = build(db)));
  return statement;
}
