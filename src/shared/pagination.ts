import { createHmac, timingSafeEqual } from "node:crypto";
import { type, type Type } from "arktype";
import { and, eq, gt, lt, or, type Column, type SQL } from "drizzle-orm";
import { AppError } from "./errors.ts";

// Cursor pagination (docs/api.md#pagination): `limit` 1-100 (default 20), `cursor` opaque and issued by us,
// order `created_at` ascending with the id as tie-break. A cursor is the last row's
// (created_at, id) signed with an HMAC bound to the list it came from (e.g. `environments:<org>`),
// so a forged, altered or foreign cursor is refused with 400 rather than silently honoured.

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

/** REST sends the limit as a query string, tRPC as a number; both land as an integer 1-100. */
const Limit = type("string.integer.parse | number.integer").pipe(type(`1 <= number <= ${MAX_PAGE_LIMIT}`));

/** The `limit` and `cursor` query parameters; compose with `.and(...)` for lists that take more. */
export const PageQuery = type({ "+": "reject", "limit?": Limit, "cursor?": "string" });
export type PageQuery = typeof PageQuery.infer;

export type Position = { createdAt: string; id: string };
export type PageRequest = { limit: number; after: Position | null };
export type Page<T> = { data: T[]; pagination: { limit: number; has_more: boolean; next_cursor: string | null } };

/** The page envelope's schema, for OpenAPI. */
export const pageSchema = <T>(item: Type<T>) =>
  type({ data: item.array(), pagination: { limit: "number.integer", has_more: "boolean", next_cursor: "string | null" } });

const subkeys = new WeakMap<Buffer, Buffer>();
function cursorKey(masterKey: Buffer): Buffer {
  let key = subkeys.get(masterKey);
  if (!key) subkeys.set(masterKey, (key = createHmac("sha256", masterKey).update("vecsync/pagination-cursor/v1").digest()));
  return key;
}

const mac = (masterKey: Buffer, scope: string, payload: string) =>
  createHmac("sha256", cursorKey(masterKey)).update(`${scope}\n${payload}`).digest();

export function encodeCursor(masterKey: Buffer, scope: string, position: Position): string {
  const payload = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
  return `${payload}.${mac(masterKey, scope, payload).toString("base64url")}`;
}

const badCursor = () => new AppError("validation_error", "The cursor is not one this list issued", { details: [{ path: "query.cursor", message: "is not a cursor this list issued" }] });

export function decodeCursor(masterKey: Buffer, scope: string, cursor: string): Position {
  const [payload, signature, extra] = cursor.split(".");
  if (!payload || !signature || extra !== undefined) throw badCursor();
  const given = Buffer.from(signature, "base64url");
  const expected = mac(masterKey, scope, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badCursor();
  const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  if (!Array.isArray(decoded) || typeof decoded[0] !== "string" || typeof decoded[1] !== "string") throw badCursor();
  return { createdAt: decoded[0], id: decoded[1] };
}

/** Turns the validated query into what a repository needs: how many rows and after which one. */
export function pageRequest(masterKey: Buffer, scope: string, query: PageQuery): PageRequest {
  return {
    limit: query.limit ?? DEFAULT_PAGE_LIMIT,
    after: query.cursor === undefined ? null : decodeCursor(masterKey, scope, query.cursor),
  };
}

/** The keyset condition "strictly after this row" in (created_at, id) order; undefined for page one. */
export function afterPosition(createdAt: Column, id: Column, after: Position | null): SQL | undefined {
  if (!after) return undefined;
  return or(gt(createdAt, after.createdAt), and(eq(createdAt, after.createdAt), gt(id, after.id)));
}

/** The same, in descending order: "strictly before this row", for lists shown newest first (sync history). */
export function beforePosition(key: Column, id: Column, before: Position | null): SQL | undefined {
  if (!before) return undefined;
  return or(lt(key, before.createdAt), and(eq(key, before.createdAt), lt(id, before.id)));
}

/**
 * Builds the envelope from rows fetched with `limit + 1` (the extra row only says whether more
 * exist). `positionOf` reads the ordering key of a row.
 */
export function toPage<R, T>(masterKey: Buffer, scope: string, request: PageRequest, rows: R[], positionOf: (row: R) => Position, present: (row: R) => T): Page<T> {
  const hasMore = rows.length > request.limit;
  const shown = hasMore ? rows.slice(0, request.limit) : rows;
  const last = shown.at(-1);
  return {
    data: shown.map(present),
    pagination: {
      limit: request.limit,
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(masterKey, scope, positionOf(last)) : null,
    },
  };
}
