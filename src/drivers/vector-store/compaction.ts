// Compaction: once dead keys (replaced and deleted row versions, hnsw.ts) pass their share of
// the index, a fresh index of the live rows is built *beside* the serving one, which keeps
// answering (through the graph, its strays known) and taking writes; when the new one holds
// every live row's current version it replaces the old in one synchronous step. Before, the
// generation dropped its index and answered exactly until the rebuild ended: under a steady
// change stream on 96k rows a compaction came every ~32k updates and, paced behind the writes,
// lasted over a minute — a minute of full scans for every unfiltered search, each one on the
// event loop the writes share (`bun run bench pipeline`: 1,000 changes/s fell 18 s behind).
import { addCurrentVersions, addCurrentVersionsAsync } from "./adds.ts";
import { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";
import type { Pacer } from "./pace.ts";
import { missingRows } from "./restart.ts";
import type { CollectionStatus } from "./types.ts";

/** What a compaction reads of its generation. */
export interface CompactionHost {
  readonly hnsw: HnswIndex;
  readonly mirror: Mirror;
  readonly closed: boolean;
  readonly status: CollectionStatus;
  readonly pace: Pacer;
}

/** Rows written meanwhile that the last, synchronous catch-up may add without a pause. */
const FINAL_ROWS = 256;

/** A compacted index, and the live rows it still lacks (the caller notes them for the later indexer). */
export type Compacted = { index: HnswIndex; left: number[] };

/**
 * Builds the compacted index off the event loop (addInSteps), then catches up with the rows
 * written meanwhile until few remain, and adds those with no await before returning:
 * the caller swaps it in in the same turn, so it holds every live row's current version. A change
 * stream faster than the build (2,000 changes/s against a few hundred insertions/s) would keep a
 * catch-up from ever ending: once a round does not halve what is left, the rest is returned as
 * `left`, for the caller to note as strays (found exactly, inserted later). Null when the
 * generation closed, or its index was replaced or fell out of `ready` meanwhile.
 */
export async function buildCompacted(host: CompactionHost): Promise<Compacted | null> {
  const serving = host.hnsw;
  const next = new HnswIndex(serving.dims, serving.params);
  const gone = () => host.closed || host.status !== "ready" || host.hnsw !== serving;
  let todo = host.mirror.liveRids();
  let left: number[] = [];
  for (let before = Infinity; ; ) {
    if (!(await addInSteps(next, host.mirror, todo, gone, host.pace)) || gone()) return null;
    todo = Uint32Array.from(missingRows(next, host.mirror));
    if (todo.length <= FINAL_ROWS) break;
    if (todo.length > before / 2) {
      left = Array.from(todo);
      todo = new Uint32Array(0);
      break;
    }
    before = todo.length;
  }
  addCurrentVersions(next, host.mirror, Array.from(todo));
  next.dead = next.size - host.mirror.liveCount + left.length;
  return { index: next, left };
}

/** Rows one insertion off the loop takes in a build: the new index is not searched yet, so big. */
const OFF_LOOP_BUILD_ROWS = 2048;

/**
 * Adds the current versions of the live rows among `rids` to `index` (a compaction's build, a
 * rebuild), off the event loop a few thousand rows at a time, with a turn for the foreground
 * between them (`yieldTurn`): the event loop only gathers codes. False if `stop` said so. On the
 * loop, in time-sized steps, under a steady change stream a compaction of 48k rows took a tenth
 * of the loop for minutes, beside the stream it was compacting for (`bun run bench pipeline`).
 */
export async function addInSteps(index: HnswIndex, mirror: Mirror, rids: Uint32Array, stop: () => boolean, pace: Pick<Pacer, "yieldTurn">): Promise<boolean> {
  for (let i = 0; i < rids.length; ) {
    if (stop()) return false;
    const step = Array.from(rids.subarray(i, (i += OFF_LOOP_BUILD_ROWS))).filter((rid) => mirror.isLive(rid));
    await addCurrentVersionsAsync(index, mirror, step);
    await pace.yieldTurn();
  }
  return true;
}
