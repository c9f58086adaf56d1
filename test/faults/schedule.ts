// The seeded schedule of a fault run: for each cycle, a few workloads against the source and
// the API, then one interruption, then a restart on the same data dir. Everything random comes
// from one PRNG (mulberry32) seeded by the run's seed, drawn in a fixed order, so a seed names
// one schedule exactly: `bun run bench faults --seed S` replays what a failing CI seed did.
// (Timing still differs from run to run: a kill "1.2 s after the backfill started" lands on
// whatever the process is doing then, which is the point of killing at random moments.)
import { mulberry32 } from "../../src/shared/prng.ts";

export type Rand = { next(): number; int(lo: number, hi: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean };

export function prng(seed: number): Rand {
  const next = mulberry32(seed);
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

/** A slice of the rows: those with `id % mod = rem` (so a workload needs no list of ids). */
export type Slice = { mod: number; rem: number };

export type Workload =
  | { kind: "insert"; count: number }
  | { kind: "update_text"; slice: Slice; version: number }
  | { kind: "update_metadata"; slice: Slice; category: string }
  | { kind: "delete"; slice: Slice }
  | { kind: "truncate" }
  | { kind: "reinsert"; slice: Slice }
  | { kind: "pk_change"; slice: Slice }
  | { kind: "put_model"; variant: number }
  | { kind: "put_columns"; variant: number };

export type Interruption =
  /**
   * SIGTERM, waiting for the exit (the shutdown checkpoints every index). `settle`: first wait
   * until the workloads are applied (issue 12, 1: deletes applied by a pass, then SIGTERM).
   */
  | { kind: "sigterm"; settle?: boolean }
  /** SIGKILL `delayMs` after the last workload (mid-sync, mid-backfill, mid-swap). */
  | { kind: "kill"; delayMs: number }
  /** SIGTERM, then SIGKILL `delayMs` later: during the shutdown's index checkpoint. */
  | { kind: "kill_in_checkpoint"; delayMs: number }
  /** After the restart, SIGKILL `delaysMs[i]` after spawn, once per delay: during start-up's index load. */
  | { kind: "kill_in_startup"; delaysMs: number[] }
  /**
   * cdc worlds only (issue 14, docs/day-two.md#lost-change-feed): a fault of the change feed done
   * to the source, then the `after` row changes. With the service running and no restart (it must
   * heal by itself), or, `down`, between a SIGTERM and the restart (start-up must heal it).
   */
  | { kind: FeedFault; down: boolean; after: Workload[] };

/**
 * drop_slot: walsender ended, then pg_drop_replication_slot. drop_publication: DROP PUBLICATION.
 * advance_slot: walsender ended, changes committed, then the slot advanced to the current WAL
 * position (those changes skipped). terminate_walsender: the stream broken. terminate_backends:
 * every backend of the source database ended, as a source restart does.
 */
export const FEED_FAULTS = ["drop_slot", "drop_publication", "advance_slot", "terminate_walsender", "terminate_backends"] as const;
export type FeedFault = (typeof FEED_FAULTS)[number];
export const isFeedFault = (i: Interruption): i is Extract<Interruption, { kind: FeedFault }> => (FEED_FAULTS as readonly string[]).includes(i.kind);

export type Cycle = { workloads: Workload[]; interruption: Interruption };

/** Model variants a PUT moves between: 32 → 48 dimensions, and an equal-dimension model change. */
export const MODELS = [
  { embedding_model: "text-embedding-3-small", embedding_dimensions: 32 },
  { embedding_model: "text-embedding-3-large", embedding_dimensions: 48 },
  { embedding_model: "text-embedding-3-large", embedding_dimensions: 32 },
] as const;

export const CATEGORIES = ["alpha", "beta", "gamma", "delta"] as const;

function workload(r: Rand, cycle: number, rows: number): Workload {
  const slice = (): Slice => {
    const mod = r.pick([3, 5, 7, 11, 13, 29]);
    return { mod, rem: r.int(0, mod - 1) };
  };
  // Weights: row changes are common, TRUNCATE and PUT rare (each PUT is a whole re-backfill).
  const x = r.next();
  if (x < 0.2) return { kind: "insert", count: r.int(1, Math.max(2, Math.floor(rows / 10))) };
  if (x < 0.38) return { kind: "update_text", slice: slice(), version: cycle };
  if (x < 0.5) return { kind: "update_metadata", slice: slice(), category: r.pick(CATEGORIES) };
  if (x < 0.64) return { kind: "delete", slice: slice() };
  if (x < 0.69) return { kind: "truncate" };
  if (x < 0.79) return { kind: "reinsert", slice: slice() };
  if (x < 0.87) return { kind: "pk_change", slice: slice() };
  if (x < 0.94) return { kind: "put_model", variant: r.int(0, MODELS.length - 1) };
  return { kind: "put_columns", variant: r.int(0, 1) };
}

function interruption(r: Rand, busyMs: number, swaps: boolean): Interruption {
  // After a PUT, half the time let the re-backfill finish and swap under the query loop first
  // (issue 12, 3: answers across a swap); otherwise the kills below land in it.
  if (swaps && r.chance(0.5)) return { kind: "sigterm", settle: true };
  const x = r.next();
  if (x < 0.25) return { kind: "sigterm", settle: r.chance(0.6) };
  if (x < 0.65) return { kind: "kill", delayMs: r.int(0, busyMs) };
  if (x < 0.8) return { kind: "kill_in_checkpoint", delayMs: r.int(0, 300) };
  return { kind: "kill_in_startup", delaysMs: Array.from({ length: r.int(1, 3) }, () => r.int(0, 1500)) };
}

/** A workload that changes rows (no PUT): what a feed fault's `after` commits. */
function rowWorkload(r: Rand, cycle: number, rows: number): Workload {
  for (;;) {
    const w = workload(r, cycle, rows);
    if (w.kind !== "put_model" && w.kind !== "put_columns") return w;
  }
}

/** A cdc world's interruption: a feed fault 60 % of the time, else one of the process faults above. */
function cdcInterruption(r: Rand, cycle: number, rows: number, busyMs: number, swaps: boolean): Interruption {
  if (r.chance(0.4)) return interruption(r, busyMs, swaps);
  const kind = r.pick(FEED_FAULTS);
  // Terminating backends of a stopped service ends nothing of its own: those are always live.
  const down = !kind.startsWith("terminate_") && r.chance(0.25);
  // At least an insert after the fault, so there is WAL the lost feed must not drop (a dropped
  // publication is only noticed by the walsender when it decodes a change of the table).
  const after: Workload[] = [{ kind: "insert", count: r.int(1, 20) }];
  if (r.chance(0.5)) after.push(rowWorkload(r, cycle, rows));
  return { kind, down, after };
}

/**
 * The schedule of one world. `busyMs` bounds the random kill delay: about how long the work
 * after a workload (a sync pass, a backfill of the table) lasts, so kills land inside it.
 */
export function schedule(seed: number, cycles: number, rows: number, busyMs: number, cdc = false): { firstKillAt: number; cycles: Cycle[] } {
  const r = prng(seed);
  // Cycle 0 kills the first backfill once this fraction of the rows is synced (issue 12, 2: ~30 %):
  // a point of its progress, observed, rather than a delay that a loaded machine would shift.
  const firstKillAt = r.int(5, 90) / 100;
  const out: Cycle[] = [];
  for (let c = 1; c <= cycles; c++) {
    const workloads = Array.from({ length: r.int(1, 3) }, () => workload(r, c, rows));
    const swaps = workloads.some((w) => w.kind === "put_model" || w.kind === "put_columns");
    // A batch world's draws are as they always were: its seeds keep naming the same schedules.
    out.push({ workloads, interruption: cdc ? cdcInterruption(r, c, rows, busyMs, swaps) : interruption(r, busyMs, swaps) });
  }
  return { firstKillAt, cycles: out };
}

const describeWorkload = (x: Workload) => ("slice" in x ? `${x.kind}(id%${x.slice.mod}=${x.slice.rem})` : "variant" in x ? `${x.kind}(${x.variant})` : "count" in x ? `${x.kind}(${x.count})` : x.kind);

export function describeCycle(c: Cycle): string {
  const i = c.interruption;
  const how = isFeedFault(i)
    ? `${i.down ? "sigterm, " : ""}${i.kind}, ${i.after.map(describeWorkload).join(" + ")}${i.down ? ", restart" : ", no restart"}`
    : i.kind === "kill_in_startup" ? `${i.kind}(${i.delaysMs.join(",")} ms)` : "delayMs" in i ? `${i.kind}(${i.delayMs} ms)` : i.kind === "sigterm" && i.settle ? "settle, sigterm" : i.kind;
  return `${c.workloads.map(describeWorkload).join(" + ")} → ${how}`;
}
