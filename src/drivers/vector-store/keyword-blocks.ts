// Contiguous copies of the i8 codes of the rows holding one keyword value, for the exact path of a
// keyword `=` / `in` filter. Scanning 5,000 rows scattered over the mirror's slabs costs mostly
// their gather (one 512-byte copy each): 0.70 ms at 100k × 512 against 0.19 ms for the same
// native scan over a block already in one buffer. With the blocks, a 5 % keyword filter is
// cheaper exact than through HNSW (0.62-0.87 ms at kq 320 there, recall < 1), which made it the
// slowest query over HTTP (bench http).
//
// A block is made on first use and dropped whenever one of its rows changes (scan-blocks.ts `touch`:
// a row's vector, its value, its removal), so it never needs patching; under steady writes that
// costs the gather the exact path made before. Least recently used blocks go first past a byte
// budget per generation.

export interface Block {
  /** The value's live rids, ascending. */
  rids: Uint32Array;
  /** Their codes, row after row, in a buffer of their own (usearch ignores typed-array offsets). */
  codes: Int8Array;
}

/** Bytes of blocks one generation keeps: every value of a keyword column at 100k × 512 (53 MB). */
export const KEYWORD_BLOCK_BYTES = 64 * 2 ** 20;

/** Below this many rows the f32 exact path over the scattered rows is as fast (exact.ts SCAN_MIN_ROWS). */
export const BLOCK_MIN_ROWS = 512;

/** The rows blocks are made from (mirror.ts). */
export interface CodeSource {
  readonly dims: number;
  /** Copies the codes of rids[from] and some rows after it into a scratch view (mirror.ts gatherCodes). */
  gatherCodes(rids: ArrayLike<number>, from: number, max: number): Int8Array;
}

/** The codes of `rids`, row after row, in a buffer of their own (blocks, the strays' copy: stray-scan.ts). */
export function codesOf(source: CodeSource, rids: ArrayLike<number>): Int8Array<ArrayBuffer> {
  const codes = new Int8Array(rids.length * source.dims);
  for (let i = 0; i < rids.length; ) {
    const part = source.gatherCodes(rids, i, GATHER_CODES_ROWS);
    codes.set(part, i * source.dims);
    i += part.length / source.dims;
  }
  return codes;
}
const GATHER_CODES_ROWS = 2048;

export class KeywordBlocks {
  /** In least recently used order: a read moves a block to the end. */
  private readonly blocks = new Map<string, Block>();
  private used = 0;

  constructor(
    private readonly dims: number,
    private readonly budget = KEYWORD_BLOCK_BYTES,
  ) {}

  /** Would a block of `rows` rows be kept (worth making and within the budget)? */
  fits(rows: number): boolean {
    return rows >= BLOCK_MIN_ROWS && blockBytes(rows, this.dims) <= this.budget;
  }

  /** The block of `value` in `column`, made by `make` when there is none. */
  get(column: number, value: string, make: () => Block): Block {
    const key = keyOf(column, value);
    const found = this.blocks.get(key);
    if (found) {
      this.blocks.delete(key);
      this.blocks.set(key, found);
      return found;
    }
    const block = make();
    const size = blockBytes(block.rids.length, this.dims);
    if (size > this.budget) return block;
    for (const [k, old] of this.blocks) {
      if (this.used + size <= this.budget) break;
      this.blocks.delete(k);
      this.used -= blockBytes(old.rids.length, this.dims);
    }
    this.blocks.set(key, block);
    this.used += size;
    return block;
  }

  /** A row holding `value` in `column` changed: that block no longer holds the truth. */
  touch(column: number, value: string): void {
    if (this.used === 0) return;
    const key = keyOf(column, value);
    const block = this.blocks.get(key);
    if (!block) return;
    this.blocks.delete(key);
    this.used -= blockBytes(block.rids.length, this.dims);
  }

  bytes(): number {
    return this.used;
  }
}

function blockBytes(rows: number, dims: number): number {
  return rows * (dims + 4);
}

function keyOf(column: number, value: string): string {
  return `${column}\u0000${value}`;
}
