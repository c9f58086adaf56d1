// The strays' i8 codes in one buffer, for the scan every search makes of them past
// STRAYS_SCANNED_FROM (search.ts withStrays). Gathering them from the mirror's slabs per search
// was the cost: on 1M × 768, 6,834 strays are 5.2 MB read in 768-byte pieces from 1 GB of codes,
// and an unfiltered search took 7.2 ms against 2.4 ms with 507 strays. Copied once, they are one
// native scan per search; the copy follows the set's changes since the last search (a stray whose
// row is rewritten or deleted leaves the set first, generation.ts retireVersions).
import { exactSearch, type Matches, MetricKind } from "usearch";
import type { Candidate } from "./exact.ts";
import { codesOf } from "./column-order.ts";
import type { Mirror } from "./mirror.ts";
import { quantizeQuery } from "./quantize.ts";

/** Changes a set keeps for its copy past this many (and a quarter of its size), the copy is made anew instead. */
const JOURNAL_MIN = 4096;

/**
 * A set of rids that counts its changes and keeps them, in order, until the copy of its members'
 * codes takes them (`takeChanges`), so the copy follows it a change at a time. Kept as
 * `rid · 2 + 1` for an add, `rid · 2` for a delete.
 */
export class CountedSet extends Set<number> {
  changes = 0;
  /** Null: more changes than are worth replaying, or a clear; the copy is made anew. */
  private journal: number[] | null = [];

  override add(rid: number): this {
    if (!this.has(rid)) this.note(rid * 2 + 1);
    return super.add(rid);
  }

  override delete(rid: number): boolean {
    const gone = super.delete(rid);
    if (gone) this.note(rid * 2);
    return gone;
  }

  override clear(): void {
    if (this.size > 0) {
      this.changes++;
      this.journal = null;
    }
    super.clear();
  }

  /** The changes since the last call, oldest first; null when the copy must be made anew. */
  takeChanges(): number[] | null {
    const taken = this.journal;
    this.journal = [];
    return taken;
  }

  private note(change: number): void {
    this.changes++;
    if (!this.journal) return;
    this.journal.push(change);
    if (this.journal.length > Math.max(JOURNAL_MIN, this.size / 4)) this.journal = null;
  }
}

/**
 * The strays' codes in one buffer, in no particular order, following the set a change at a time.
 * Made anew per change, the copy cost every search after one, and while a sweep or a change stream
 * moves the set that is every search: 20,000 strays of a 300k × 256 mirror, 1.06-1.14 ms a search
 * against 0.15 ms followed.
 */
export class StrayCodes {
  private made = false;
  private count = 0;
  private rids = new Uint32Array(0);
  private codes = new Int8Array(0);
  /** rid → its row in the copy. */
  private readonly rows = new Map<number, number>();

  /**
   * The `want` nearest strays by the codes' cosine among those `accept` takes (live, current,
   * passing the filter), with `share` the expected fraction accepted: asked for enough that
   * `want` usually pass, then for all of them when not.
   */
  nearest(strays: CountedSet, mirror: Mirror, query: Float32Array, want: number, share: number, accept: (rid: number) => boolean): Candidate[] {
    this.refresh(strays, mirror);
    const n = this.count;
    if (n === 0 || want <= 0) return [];
    const codes = quantizeQuery(query);
    // A view from offset 0: usearch reads the buffer from its start, `n` rows of it.
    const rows = this.codes.subarray(0, n * mirror.dims);
    let asked = Math.min(n, Math.ceil((2 * want) / Math.max(share, 1e-3)) + 16);
    for (;;) {
      const found = exactSearch(rows, codes, mirror.dims, asked, MetricKind.Cos, 1) as Matches;
      const out: Candidate[] = [];
      for (let i = 0; i < found.keys.length && out.length < want; i++) {
        const rid = this.rids[Number(found.keys[i]!)]!;
        if (accept(rid)) out.push({ rid, distance: found.distances[i]! });
      }
      if (out.length >= want || asked >= n) return out;
      asked = n;
    }
  }

  /** Applies the set's changes since the last search: a stray re-added (its row rewritten) is copied again. */
  private refresh(strays: CountedSet, mirror: Mirror): void {
    const changes = strays.takeChanges();
    if (!this.made || changes === null) return this.make(strays, mirror);
    if (changes.length === 0) return;
    const last = new Map<number, boolean>();
    for (const change of changes) last.set(Math.floor(change / 2), change % 2 === 1);
    const added: number[] = [];
    for (const [rid, isAdd] of last) {
      this.remove(rid, mirror.dims);
      if (isAdd && strays.has(rid) && mirror.isLive(rid)) added.push(rid);
    }
    this.append(added, mirror);
  }

  /** The copy made from the whole set (ascending rids: one slab run per gather). */
  private make(strays: CountedSet, mirror: Mirror): void {
    this.made = true;
    this.count = 0;
    this.rows.clear();
    this.append(Uint32Array.from([...strays].filter((rid) => mirror.isLive(rid))).sort(), mirror);
  }

  private append(rids: ArrayLike<number>, mirror: Mirror): void {
    if (rids.length === 0) return;
    const dims = mirror.dims;
    const need = this.count + rids.length;
    if (need > this.rids.length) {
      const room = Math.max(need, Math.ceil(this.rids.length * 1.5), 64);
      const grownRids = new Uint32Array(room);
      grownRids.set(this.rids.subarray(0, this.count));
      const grownCodes = new Int8Array(room * dims);
      grownCodes.set(this.codes.subarray(0, this.count * dims));
      this.rids = grownRids;
      this.codes = grownCodes;
    }
    this.codes.set(codesOf(mirror, rids), this.count * dims);
    for (let i = 0; i < rids.length; i++) {
      this.rids[this.count] = rids[i]!;
      this.rows.set(rids[i]!, this.count++);
    }
  }

  /** Takes `rid` out of the copy, if there: the last row moves into its place. */
  private remove(rid: number, dims: number): void {
    const row = this.rows.get(rid);
    if (row === undefined) return;
    this.rows.delete(rid);
    const last = --this.count;
    if (row === last) return;
    const moved = this.rids[last]!;
    this.rids[row] = moved;
    this.rows.set(moved, row);
    this.codes.copyWithin(row * dims, last * dims, (last + 1) * dims);
  }
}
