// A mirror's contiguous copies of codes for the exact path (keyword-blocks.ts, range-blocks.ts):
// what each costs to keep current lives here, the mirror only reports its changes (`touch`).
// Keyword blocks follow their rows one by one; range blocks hold for one state of the whole
// mirror (`changes`) and are made again once writes pause (`quietMs`).
import type { ColumnStore } from "./columns.ts";
import { type Block, codesOf, KeywordBlocks } from "./keyword-blocks.ts";
import { makeRangeBlock, RANGE_QUIET_MS, type RangeBlock, RangeBlocks, type RangeSource } from "./range-blocks.ts";
import { realClock } from "./pace.ts";
import type { MetadataColumn, MetadataValue } from "./types.ts";

/** The mirror as the blocks read it. */
export interface BlockSource extends RangeSource {
  readonly liveCount: number;
}

/** Making range blocks takes at most ~1 % of the time: the wait after writes is 100 × the last making. */
const BUILD_SHARE = 100;

export class ScanBlocks {
  private readonly keywords: KeywordBlocks;
  private readonly ranges: RangeBlocks;
  private readonly keywordColumns: number[];
  /** Counts every change to a row (its vector, metadata or presence); `changedAt` the last one's time. */
  private changes = 0;
  private changedAt = 0;
  /** How long the last range block took to make (ms): the wait before the next grows with it. */
  private lastBuildMs = 0;

  constructor(
    private readonly source: BlockSource,
    private readonly metadata: readonly MetadataColumn[],
    private readonly column: (c: number) => ColumnStore,
    private readonly quietMs = RANGE_QUIET_MS,
    private readonly now: () => number = realClock.now,
  ) {
    this.keywords = new KeywordBlocks(source.dims);
    this.ranges = new RangeBlocks(source.dims);
    this.keywordColumns = metadata.flatMap((c, i) => (c.type === "keyword" ? [i] : []));
  }

  /** Row `rid` is about to change, or has just changed: the blocks holding it (by its current values) no longer hold the truth. */
  touch(rid: number): void {
    this.changes++;
    this.changedAt = this.now();
    for (const c of this.keywordColumns) {
      const value = this.column(c).get(rid);
      if (typeof value === "string") this.keywords.touch(c, value);
    }
  }

  /** Would `rows` rows of one keyword filter be scanned from blocks (`keyword`)? */
  keywordFits(rows: number): boolean {
    return this.keywords.fits(rows);
  }

  /**
   * The blocks of the rows whose keyword column `column` holds one of `values`, made where
   * missing; null when the column is not a keyword column or they do not fit.
   */
  keyword(column: number, values: readonly MetadataValue[]): Block[] | null {
    const store = this.column(column);
    if (!store.rids || !store.count) return null;
    const present = [...new Set(values)].filter((v): v is string => typeof v === "string" && store.count!(v) > 0);
    if (!this.keywordFits(present.reduce((n, v) => n + store.count!(v), 0))) return null;
    return present.map((value) =>
      this.keywords.get(column, value, () => {
        const rids = store.rids!(value);
        return { rids, codes: codesOf(this.source, rids) };
      }),
    );
  }

  /**
   * The range block of numeric column `column`: the current one; else a new one when writes have
   * paused for `quietMs` and it fits the budget; else null.
   */
  range(column: number): RangeBlock | null {
    const type = this.metadata[column]?.type;
    if (type !== "float" && type !== "integer") return null;
    const found = this.ranges.current(column, this.changes);
    if (found) return found;
    const started = this.now();
    if (started - this.changedAt < this.quiet() || !this.ranges.fits(this.source.liveCount)) return null;
    const block = this.ranges.put(column, makeRangeBlock(this.source, this.column(column).get, this.changes));
    this.lastBuildMs = this.now() - started;
    return block;
  }

  /**
   * How long writes must have paused before a range block is made: `quietMs`, and at least
   * BUILD_SHARE times the last block's making, so that a table written every few seconds (CDC)
   * does not pay a ~100 ms step after each write; 0 (tests): no wait.
   */
  private quiet(): number {
    return this.quietMs === 0 ? 0 : Math.max(this.quietMs, BUILD_SHARE * this.lastBuildMs);
  }

  /** Does a range block still hold the rows as they are (no change since it was made)? */
  isCurrent(block: RangeBlock): boolean {
    return block.changes === this.changes;
  }

  bytes(): number {
    return this.keywords.bytes() + this.ranges.bytes();
  }
}
