// Rows decided by their back links instead of a search (issue 16: the searches that checked every
// written row were about a quarter of a 1M-row build's CPU). vecsync's binding counts, for each
// row an insertion added, how many of its base-level neighbours link back to it, once every row
// of the insertion is in (native/graph/graph.cpp `back_links`; `Graph.add`/`addAsync`,
// src/drivers/vector-store/graph-binding.ts). A row no neighbour links back to cannot be reached at the base level;
// one with several nearly always is found by a search for its own vector. So the rows with few are
// searched for at once (strays.ts checkStrays), and the others leave the stray list and are
// searched for in the next quiet spell (sweeper.ts `verifyLater`), or by the sweep after a fill,
// which searches for every row anyway.
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";

/**
 * Back links enough to take a row off the stray list before searching for it. Probes at
 * connectivity 16, every row searched for by its own vector right after its insertion: at depth
 * 400, of 100k × 256 (random) and 100k × 768 (clustered, the benches' data), no row with 4 or more
 * was missed and 2 with one were; at ef 64 (the depth up to 100k rows) 149 and 22 rows with 4 or
 * more were missed, hence the search later. At connectivity 16 most rows have 9-32, ~3 % of the
 * clustered rows fewer than 4; at connectivity 4 a fifth of the rows have fewer, at 2 nearly all.
 */
export const LINKS_FOUND = 4;

/** An insertion's rows (sorted rids), the versions inserted, and their back links (null: none were asked for). */
export type Added = { rids: ArrayLike<number>; versions: ArrayLike<number>; linked: Uint8Array | null };

/**
 * Splits an insertion's live rows: `now`, to be searched for at once, those with fewer than
 * LINKS_FOUND back links (all of them where none were counted) and those whose version changed
 * meanwhile (the new one waits for its own insertion); `later`, the others, taken off the stray
 * list here, for the sweeper to search for once the writes pause.
 */
export function byBackLinks(hnsw: HnswIndex, mirror: Mirror, { rids, versions, linked }: Added): { now: number[]; later: number[] } {
  const now: number[] = [];
  const later: number[] = [];
  for (let i = 0; i < rids.length; i++) {
    const rid = rids[i]!;
    if (!mirror.isLive(rid)) continue;
    const links = linked?.[i] ?? 0;
    // 255: a version the index held already (a replay), whose own check came with its insertion.
    if (links >= LINKS_FOUND && links < 255 && mirror.isCurrent(rid, versions[i]!)) {
      hnsw.strays.delete(rid);
      later.push(rid);
    } else now.push(rid);
  }
  return { now, later };
}
