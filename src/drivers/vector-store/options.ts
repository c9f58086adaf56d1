// The managed vector store's options and their defaults (store.ts opens a store with them).
import type { Client } from "@libsql/client";
import type { Foreground } from "../../shared/foreground.ts";
import type { StoreLog } from "./generation.ts";
import type { StoreClock } from "./pace.ts";
import type { IndexParams } from "./types.ts";

/**
 * Defaults from `bun run bench query` (clustered data). The index is i8: it only has to find
 * candidates, which are re-scored in f32 from the mirror, and against f16 it searches 1.5× faster
 * (100k × 384: 0.12 against 0.17 ms at ef 64, both recall@10 0.998 re-scored; 1M × 768: ef 384
 * in 0.74 ms at 0.992, where f16 took 1.35 ms for 0.88 at ef 64), builds twice as fast and
 * takes a quarter of f32's memory. M=16 and ef=64 at 100k rows (scaled with size, planner.ts);
 * ef_construction 128 buys recall for a one-off build cost.
 */
export const DEFAULT_INDEX_PARAMS: IndexParams = { connectivity: 16, expansionAdd: 128, expansionSearch: 64, threads: 2 };

/**
 * 512 MiB of f32 vectors per collection: 350k rows at 384 dims, 175k at 768. Below it searches
 * need no SQL read; above it a collection takes a quarter of the memory for its vectors (docs/performance.md
 * "1M × 768") and each search reads ~2k rows back from libSQL.
 */
export const DEFAULT_FLOAT_MIRROR_BYTES = 512 * 2 ** 20;

export interface VectorStoreOptions {
  /** Created by the caller (`createClient({ url })`); local files should be in WAL mode. */
  client: Client;
  /** Where index checkpoints live, e.g. `<data-dir>/indexes`. */
  indexDir: string;
  index?: Partial<IndexParams>;
  log?: StoreLog;
  /** Scales the planner's exact-path match cap (planner.ts); tests lower it to reach HNSW on small data. */
  exactCapScale?: number;
  /**
   * A collection keeps its f32 vectors in memory while they take at most this many bytes (live
   * rows × dims × 4; default DEFAULT_FLOAT_MIRROR_BYTES). Past it the collection turns compact
   * (mirror.ts): i8 codes only, no texts, and each search reads its final candidates' f32
   * vectors and texts from libSQL (refine.ts). 0: every collection compact from the start.
   */
  floatMirrorBytes?: number;
  /**
   * Measure filtered-search depth on each collection's own data (calibration.ts) in the
   * background after a filtered search finds the measurement missing or stale (default true).
   */
  autoCalibrate?: boolean;
  /** How long writes must have paused before a filter's column order is made again (column-order.ts; default ORDER_QUIET_MS). */
  orderQuietMs?: number;
  /**
   * The process's foreground (shared/foreground.ts): requests and sync that background work
   * gives way to. One per process, shared with the service (`services.foreground`).
   */
  foreground?: Foreground;
  /** Time for background work (pace.ts; default the real one): tests move a fake one. */
  clock?: StoreClock;
}
