// Rows' current versions added to a graph from the mirror's codes: on the event loop
// (`addCurrentVersions`: a load's replay, a write's own insertion), or off it (HnswIndex.addAsync:
// the later indexer's, later.ts, and a compaction's or rebuild's build, compaction.ts), where the
// loop only gathers the rows' codes and the graph's work runs on a thread of its own, at a lower
// priority.
import type { Added } from "./back-links.ts";
import type { HnswIndex } from "./hnsw.ts";
import { GATHER_ROWS, type Mirror } from "./mirror.ts";

/**
 * (Re-)adds rids' current versions from the mirror, in gather-sized batches (ascending rids: one
 * slab each, so each batch is one gather). Versions already in the index are skipped (`add`).
 * Answers what it added, with the back links where asked (back-links.ts).
 */
export function addCurrentVersions(index: HnswIndex, mirror: Mirror, rids: number[], links = false): Added {
  const { sorted, versions } = currentVersions(mirror, rids);
  const linked: Uint8Array | null = links ? new Uint8Array(sorted.length) : null;
  for (let i = 0; i < sorted.length; ) {
    const vectors = mirror.gatherCodes(sorted, i, GATHER_ROWS).slice();
    const n = vectors.length / mirror.dims;
    const part = index.add(sorted.subarray(i, i + n), versions.slice(i, i + n), vectors, links);
    if (part) linked?.set(part, i);
    i += n;
  }
  return { rids: sorted, versions, linked };
}

/** `addCurrentVersions` as one insertion off the event loop (HnswIndex.addAsync). */
export async function addCurrentVersionsAsync(index: HnswIndex, mirror: Mirror, rids: number[]): Promise<Added> {
  const { sorted, versions } = currentVersions(mirror, rids);
  const parts: Int8Array[] = [];
  for (let i = 0; i < sorted.length; ) {
    const part = mirror.gatherCodes(sorted, i, GATHER_ROWS).slice();
    parts.push(part);
    i += part.length / mirror.dims;
  }
  const linked = await index.addAsync(sorted, versions, concat(parts), (rid, version) => mirror.isCurrent(rid, version));
  return { rids: sorted, versions, linked };
}

/** The rids ascending, and the low 32 bits of each one's current version (the graph's key holds those). */
function currentVersions(mirror: Mirror, rids: number[]): { sorted: Float64Array; versions: number[] } {
  const sorted = Float64Array.from(rids).sort();
  return { sorted, versions: Array.from(sorted, (rid) => mirror.versionOf(rid) % 2 ** 32) };
}

function concat(parts: Int8Array[]): Int8Array {
  if (parts.length === 1) return parts[0]!;
  const length = parts.reduce((n, p) => n + p.length, 0);
  const out = new Int8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
