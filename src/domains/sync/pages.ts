// Reading a source's hashes page by page in primary-key order, one page ahead of the consumer,
// so the source read of page N+1 overlaps the embedding and writing of page N.
import type { Key, RowHash } from "../../drivers/sources/types.ts";
import type { SyncJob } from "./job.ts";

/** Rows per page: one hash query, one fetch, one embed call (the driver splits it per provider limits). */
export const PAGE_SIZE = 256;

export function readHashPage(job: SyncJob, afterPk: Key | null, limit = PAGE_SIZE): Promise<RowHash[]> {
  return job.source.hashes({ table: job.table.sourceTable, pk: [job.table.primaryKeyColumn], textColumns: job.textColumns, metaColumns: job.metaColumns, afterPk, limit });
}

/** Pages of hashes after `afterPk`, the next one always already requested. */
export async function* hashPages(job: SyncJob, afterPk: Key | null, limit = PAGE_SIZE): AsyncGenerator<RowHash[]> {
  let next = readHashPage(job, afterPk, limit);
  for (;;) {
    const page = await next;
    if (page.length === 0) return;
    next = readHashPage(job, page[page.length - 1]!.key, limit);
    next.catch(() => {}); // observed when awaited; a consumer that stops early must not leave it unhandled
    yield page;
    if (page.length < limit) return;
  }
}
