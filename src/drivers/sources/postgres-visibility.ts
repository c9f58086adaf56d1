// When a change batch may be handed out. The walsender sends a transaction's commit as soon as its
// WAL record is flushed, a moment BEFORE the transaction leaves the server's list of running ones;
// a read in that moment still sees the rows as they were. The CDC consumer re-reads the batch's
// keys, so such a read would store the old row and lose the change until the next hash pass
// (seen end to end: test/e2e/postgres-cdc.test.ts, regression test/regression/cdc-reread-before-visible).
// So the feed waits until a fresh snapshot on the source sees the transaction.
import type { PostgresSource } from "./postgres.ts";
import type { VisibilityWait } from "./postgres-feed.ts";

type Snapshot = { xmin: bigint; xmax: bigint; running: Set<bigint> };

const EPOCH = 1n << 32n;
/** A commit that never shows would be a server oddity: go on after this (the hash pass repairs). */
const GIVE_UP_MS = 10_000;

/** `xmin:xmax:xip,…` (txid_current_snapshot, 64-bit ids with the epoch). */
export function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(":");
  return { xmin: BigInt(xmin!), xmax: BigInt(xmax!), running: new Set((xip ?? "").split(",").filter(Boolean).map(BigInt)) };
}

/** The 64-bit id of a recent 32-bit xid: the one of its two candidate epochs nearest the snapshot. */
export function widen(xid: number, xmax: bigint): bigint {
  let full = (xmax / EPOCH) * EPOCH + BigInt(xid);
  if (full > xmax + EPOCH / 2n) full -= EPOCH;
  else if (full + EPOCH / 2n < xmax) full += EPOCH;
  return full;
}

/** True when every snapshot taken from now on sees the (committed) transaction. */
export function sees(snapshot: Snapshot, full: bigint): boolean {
  return full < snapshot.xmin || (full < snapshot.xmax && !snapshot.running.has(full));
}

export function visibilityWait(source: PostgresSource): VisibilityWait {
  let last: Snapshot | null = null;
  return async (xid) => {
    // xmin only rises: an xid below the last one seen needs no query (the common case under load).
    if (last && widen(xid, last.xmax) < last.xmin) return;
    const deadline = Date.now() + GIVE_UP_MS;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      const [row] = await source.run("read snapshot", (sql) => sql<{ snap: string }[]>`SELECT txid_current_snapshot()::text AS snap`);
      last = parseSnapshot(row!.snap);
      if (sees(last, widen(xid, last.xmax)) || Date.now() > deadline) return;
      await Bun.sleep(delay);
    }
  };
}
