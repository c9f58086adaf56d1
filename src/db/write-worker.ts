// The thread that runs fast-writes.ts's write batches, so that a batch's statements, the keyword
// index they feed and the commit's fsync (10–30 ms for a backfill's 64 rows) hold this thread
// rather than the event loop that answers queries. One per database file and process; it runs one
// batch at a time, in the order posted, on one connection of its own with each statement prepared
// once (statement-cache.ts). The write gate (write-gate.ts) keeps every other writer of the process
// out while a batch is in flight.
import { statementCache, type StatementCache, writeBatch } from "./statement-cache.ts";
import type { WriteReply, WriteRequest } from "./write-protocol.ts";

declare const self: Worker;

let cache: StatementCache | null = null;

self.onmessage = (event: MessageEvent<WriteRequest>) => {
  const req = event.data;
  if (req.kind === "close") {
    // libsql closes a connection only once its statements are collected: collect them before
    // the thread ends, or the file would stay open (and held) for the life of the process.
    cache?.close();
    cache = null;
    Bun.gc(true);
    process.exit(0); // in a worker: ends this thread only
    return;
  }
  cache ??= statementCache(req.path, req.busyTimeoutMs);
  let reply: WriteReply;
  try {
    reply = { id: req.id, ok: true, results: writeBatch(cache, req.stmts), size: cache.size, bytes: cache.bytes };
  } catch (err) {
    reply = { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err), size: cache.size, bytes: cache.bytes };
  }
  postMessage(reply);
};
