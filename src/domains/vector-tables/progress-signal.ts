// Wakes the queries waiting for a table to sync further (`min_synced_through`,
// docs/vector-tables.md#read-your-writes) when this process records that it did: state.ts
// announces every write that can move `synced_through` (a pass or fill completed, a change batch
// or a feed position stored, a lost feed resynced). A wake-up only makes a waiter read the row
// again, so a stray one costs a read and a missed one (another process recorded it, CONTRACT 12)
// is caught by the waiter's own slow re-read.
//
// Module-level, keyed by table id, unlike the engine's per-Services state (sync/state.ts): the
// recording functions get a database executor, not the services, and ids are random, so two
// service instances in one test process never wake each other's waiters by mistake (and when
// they share a database, waking them is right).

type Wake = () => void;

const waiters = new Map<string, Set<Wake>>();

/** The table's synced position may have moved: every waiter re-reads its row. */
export function announceProgress(tableId: string): void {
  const set = waiters.get(tableId);
  if (!set) return;
  waiters.delete(tableId);
  for (const wake of set) wake();
}

/**
 * Armed now, `fired` resolves at the table's next announcement or after `timeoutMs`, whichever
 * comes first. Arm before reading what you compare, so a move recorded during the read is not
 * missed; `disarm` once done (it clears the timer and the registration).
 */
export function armProgress(tableId: string, timeoutMs: number): { fired: Promise<void>; disarm(): void } {
  let wake!: Wake;
  const fired = new Promise<void>((resolve) => (wake = resolve));
  const timer = setTimeout(wake, timeoutMs);
  let set = waiters.get(tableId);
  if (!set) waiters.set(tableId, (set = new Set()));
  set.add(wake);
  return {
    fired,
    disarm() {
      clearTimeout(timer);
      const current = waiters.get(tableId);
      current?.delete(wake);
      if (current?.size === 0) waiters.delete(tableId);
    },
  };
}
