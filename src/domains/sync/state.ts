import type { Services } from "../../services.ts";

/** A running CDC consumer of one vector table. */
export type Consumer = {
  stop(): Promise<void>;
  done: Promise<void>;
  /** Writes the stream's sync history now (shutdown: the consumer itself may outlive the database). */
  closeHistory(): Promise<void>;
};

/**
 * What the sync engine keeps in process memory per service instance (tests build several per
 * process, so nothing lives at module level). Nothing here must survive a restart: consumers are
 * restarted from the table rows. (Rows with empty text must: they are in the database, empty-rows.ts.)
 */
export type SyncState = {
  consumers: Map<string, Consumer>;
  /** Batch passes failed in a row per table; the third one turns the table to `error`. */
  failures: Map<string, number>;
  /** Tables with a batch pass running now (a tick and a direct call must not overlap). */
  passes: Set<string>;
  /** Per table, the tail of the queue of writers waiting for its write lock (`withWriteLock`). */
  writeLocks: Map<string, Promise<void>>;
  /**
   * When the tick last started a reconciling pass of each cdc table (ms), failed ones included:
   * a failing pass is retried one reconcile interval later, not every sync interval.
   */
  reconcileAttempts: Map<string, number>;
  /**
   * Tables whose change feed was freed for their deletion (`stopSyncFor`): no consumer starts for
   * them again. One the tick started before the record was gone would find the feed missing and
   * recreate it, and the slot, left behind, would hold the source's WAL for good. A resume
   * (`startSyncFor`) takes a table out.
   */
  retired: Set<string>;
  stopped: boolean;
};

const states = new WeakMap<Services, SyncState>();

export function syncState(services: Services): SyncState {
  let state = states.get(services);
  if (!state) {
    state = { consumers: new Map(), failures: new Map(), passes: new Set(), writeLocks: new Map(), reconcileAttempts: new Map(), retired: new Set(), stopped: false };
    states.set(services, state);
  }
  return state;
}

/**
 * Runs `fn` holding the table's write lock, in arrival order. The change stream's applies and a
 * pass's flushes each read the source and write the store under it, so whichever writes a row
 * last also read it last: a pass never overwrites a row the stream stored meanwhile with an older
 * read, nor deletes one the stream inserted since the pass read past its key.
 */
export async function withWriteLock<T>(services: Services, tableId: string, fn: () => Promise<T>): Promise<T> {
  const locks = syncState(services).writeLocks;
  const before = locks.get(tableId) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  locks.set(tableId, tail);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(tableId) === tail) locks.delete(tableId);
  }
}
