import type { Services } from "../../services.ts";

/** A running CDC consumer of one vector table. */
export type Consumer = { stop(): Promise<void>; done: Promise<void> };

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
  stopped: boolean;
};

const states = new WeakMap<Services, SyncState>();

export function syncState(services: Services): SyncState {
  let state = states.get(services);
  if (!state) {
    state = { consumers: new Map(), failures: new Map(), passes: new Set(), stopped: false };
    states.set(services, state);
  }
  return state;
}
