// The strays' i8 codes in one buffer, for the scan every search makes of them past
// STRAYS_SCANNED_FROM (search.ts withStrays). Gathering them from the mirror's slabs per search
// was the cost: on 1M × 768, 6,834 strays are 5.2 MB read in 768-byte pieces from 1 GB of codes,
// and an unfiltered search took 7.2 ms against 2.4 ms with 507 strays. Copied once, they are one
// native scan per search; the copy is redone when the stray set has changed since (a stray whose
// row is rewritten or deleted leaves the set first, generation.ts retireVersions).
import { exactSearch, type Matches, MetricKind } from "usearch";
import type { Candidate } from "./exact.ts";
import { codesOf } from "./keyword-blocks.ts";
import type { Mirror } from "./mirror.ts";
import { quantizeQuery } from "./quantize.ts";

/** A set of rids that counts its changes, so a copy of its members' codes knows when it is stale. */
export class CountedSet extends Set<number> {
  changes = 0;

  override add(rid: number): this {
    if (!this.has(rid)) this.changes++;
    return super.add(rid);
  }

  override delete(rid: number): boolean {
    const gone = super.delete(rid);
    if (gone) this.changes++;
    return gone;
  }

  override clear(): void {
    if (this.size > 0) this.changes++;
    super.clear();
  }
}

export class StrayCodes {
  private changes = -1;
  private rids = new Uint32Array(0);
  private codes = new Int8Array(0);

  /**
   * The `want` nearest strays by the codes' cosine among those `accept` takes (live, current,
   * passing the filter), with `share` the expected fraction accepted: asked for enough that
   * `want` usually pass, then for all of them when not.
   */
  nearest(strays: CountedSet, mirror: Mirror, query: Float32Array, want: number, share: number, accept: (rid: number) => boolean): Candidate[] {
    this.refresh(strays, mirror);
    const n = this.rids.length;
    if (n === 0 || want <= 0) return [];
    const codes = quantizeQuery(query);
    let asked = Math.min(n, Math.ceil((2 * want) / Math.max(share, 1e-3)) + 16);
    for (;;) {
      const found = exactSearch(this.codes, codes, mirror.dims, asked, MetricKind.Cos, 1) as Matches;
      const out: Candidate[] = [];
      for (let i = 0; i < found.keys.length && out.length < want; i++) {
        const rid = this.rids[Number(found.keys[i]!)]!;
        if (accept(rid)) out.push({ rid, distance: found.distances[i]! });
      }
      if (out.length >= want || asked >= n) return out;
      asked = n;
    }
  }

  /** Copies the current strays' codes (ascending rids: one slab run per gather) when the set changed. */
  private refresh(strays: CountedSet, mirror: Mirror): void {
    if (strays.changes === this.changes) return;
    const rids = Uint32Array.from([...strays].filter((rid) => mirror.isLive(rid))).sort();
    this.rids = rids;
    this.codes = codesOf(mirror, rids);
    this.changes = strays.changes;
  }
}
