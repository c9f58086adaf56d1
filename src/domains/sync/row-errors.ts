// Rows that fail on their own (docs/vector-tables.md#row-errors): recorded beside the rows that
// render empty (empty-rows.ts, `error` set), not embedded, skipped by later passes while their text
// hash holds, and listed by GET /v1/vector-tables/{id}/errors. The other rows sync as usual.
// Today one cause: a text over ROW_TEXT_MAX_BYTES.
import { and, asc, eq, isNotNull } from "drizzle-orm";
import type { Executor } from "../../db/executor.ts";
import type { SourceRow, TextLimit } from "../../drivers/sources/types.ts";
import { afterPosition, type PageRequest } from "../../shared/pagination.ts";
import { syncEmptyRows, type LeftOutRow } from "./tables.ts";

/**
 * The most UTF-8 bytes a row's embedded text may hold: 256 KiB, about 64,000 tokens. That is twice
 * the longest model input (Voyage's 32,000 tokens; OpenAI's 8,191) and a text past its model's
 * input is cut before it is embedded anyway, so no row a model could take whole is refused. What
 * it bounds: a page of 256 rows holds at most 64 MiB of text, a stored row's text at most this,
 * and a row never costs the event loop more than its first bytes (the Postgres source does not
 * even send a longer text: FetchRequest.textLimit).
 */
export const ROW_TEXT_MAX_BYTES = 256 * 1024;

const format = (n: number) => n.toLocaleString("en-US");

/** What the source is asked not to send: the embedding columns' text past the cap. */
export const rowTextLimit = (textColumns: string[]): TextLimit => ({ columns: textColumns, maxBytes: ROW_TEXT_MAX_BYTES });

/**
 * Why the row cannot be embedded, or null: its text as the source measured it (and held back), or
 * as rendered. Cheap on a long text: its length in code units bounds its bytes from below.
 */
export function textRefusal(row: SourceRow, text: string | null): string | null {
  let size: string | null = null;
  if (row.textBytes !== undefined) size = `its text columns hold ${format(row.textBytes)} bytes`;
  else if (text !== null && text.length * 3 > ROW_TEXT_MAX_BYTES) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > ROW_TEXT_MAX_BYTES) size = `it is ${format(bytes)} bytes`;
  }
  return size && `the row's text is over the limit of ${format(ROW_TEXT_MAX_BYTES)} bytes (256 KiB): ${size}; it is not embedded until it is shorter`;
}

/** The generation's failed rows, first failed first (then by key), a page at a time. */
export function pageRowErrors(db: Executor, tableId: string, generation: number, page: PageRequest): Promise<LeftOutRow[]> {
  const t = syncEmptyRows;
  return db
    .select()
    .from(t)
    .where(and(eq(t.vectorTableId, tableId), eq(t.generation, generation), isNotNull(t.error), afterPosition(t.firstSeenAt, t.pk, page.after)))
    .orderBy(asc(t.firstSeenAt), asc(t.pk))
    .limit(page.limit + 1);
}
