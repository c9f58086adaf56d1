// Token counts for a tiktoken byte-pair encoding (cl100k_base), without building the tokens.
// js-tiktoken's `encode` costs ~15 µs for a 214-character English input and ~80 µs for a mixed
// Unicode one: per call it builds its regexes again, and per piece it encodes the piece to
// UTF-8 and joins the bytes into a decimal string to look it up. A backfill counts every input,
// and that was 11 % of the event loop during a 40k-row fill (docs/architecture.md, "Where a
// query's wait goes"). Here the split regex is built once and the ranks are keyed by the token's
// bytes as a binary string (one char per byte, what `atob` gives), so an ASCII piece is its own
// key; a piece not in the vocabulary is merged pair by pair, lowest rank first, leftmost on ties,
// as tiktoken merges. 4.4 µs and 23 µs for the inputs above; the counts equal js-tiktoken's
// (test/drivers/embeddings/bpe-count.test.ts).

/** A tiktoken ranks file's fields as js-tiktoken's ranks modules carry them. */
export interface TiktokenRanks {
  pat_str: string;
  bpe_ranks: string;
}

/**
 * A text's pieces walked in order: `starts[i]` is where piece i starts (code units) and
 * `starts[i + 1]` where it ends; `totals[i]` the tokens up to and including piece i.
 */
export type Walk = { tokens: number; starts: number[]; totals: number[] };

/** No rank: larger than every rank of the vocabulary (cl100k_base's reach ~100,000). */
const NO_RANK = 0x7fffffff;

export class BpeCounter {
  private readonly ranks = new Map<string, number>();
  private readonly split: RegExp;
  private next = new Int32Array(256);
  private rank = new Int32Array(256);

  constructor(source: TiktokenRanks) {
    this.split = new RegExp(source.pat_str, "gu");
    // Each line: a marker, the first rank, then the line's tokens in base64, ranks counting up.
    for (const line of source.bpe_ranks.split("\n")) {
      if (line === "") continue;
      const fields = line.split(" ");
      const first = Number.parseInt(fields[1]!, 10);
      for (let i = 2; i < fields.length; i++) this.ranks.set(atob(fields[i]!), first + i - 2);
    }
  }

  /** Tokens in `text`, every special-token string counted as plain text (as the embeddings API does). */
  count(text: string): number {
    let tokens = 0;
    const split = this.split;
    split.lastIndex = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) tokens += this.pieceTokens(match[0]);
    return tokens;
  }

  /**
   * Counts the pieces of `text` in order until the count passes `limit` (the piece that passes it
   * is the last one walked), recording each piece's start and the running count, so a cut needs
   * no second pass over the text. Null as soon as a piece is `tooLong` for its merge to be paid for.
   */
  walk(text: string, limit: number, tooLong: (piece: string) => boolean): Walk | null {
    const starts: number[] = [];
    const totals: number[] = [];
    let tokens = 0;
    const split = this.split;
    split.lastIndex = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      if (tooLong(match[0])) return null;
      tokens += this.pieceTokens(match[0]);
      starts.push(match.index);
      totals.push(tokens);
      if (tokens > limit) break;
    }
    starts.push(split.lastIndex || text.length); // where the last piece walked ends
    return { tokens, starts, totals };
  }

  /** Where a piece's tokens end: offsets in its UTF-8 bytes, ascending, the last its length. */
  tokenEnds(piece: string): number[] {
    const bytes = this.binary(piece);
    return this.ranks.has(bytes) ? [bytes.length] : this.merged(bytes).slice(1);
  }

  private pieceTokens(piece: string): number {
    const bytes = this.binary(piece);
    return this.ranks.has(bytes) ? 1 : this.merged(bytes).length - 1;
  }

  /** The piece's UTF-8 bytes as a binary string: ASCII as it is. */
  private binary(piece: string): string {
    for (let i = 0; i < piece.length; i++) {
      if (piece.charCodeAt(i) > 0x7f) return Buffer.from(piece, "utf8").toString("latin1");
    }
    return piece;
  }

  /**
   * Where the parts left after merging a piece's bytes start (and the last ends), the
   * lowest-ranked adjacent pair merged first, leftmost on ties. The parts are a linked list over
   * byte offsets (`next`), each with the rank of it joined to the next one (`rank`), in buffers
   * kept between calls: a merge costs a scan of the parts left and two look-ups, no array shifts.
   */
  private merged(bytes: string): number[] {
    const n = bytes.length;
    if (this.next.length <= n) {
      this.next = new Int32Array(2 * n + 2);
      this.rank = new Int32Array(2 * n + 2);
    }
    const { next, rank } = this;
    const pairRank = (i: number): number => {
      const j = next[i]!;
      return j >= n ? NO_RANK : (this.ranks.get(bytes.slice(i, next[j]!)) ?? NO_RANK);
    };
    for (let i = 0; i <= n; i++) next[i] = i + 1;
    for (let i = 0; i < n; i++) rank[i] = pairRank(i);
    for (;;) {
      let best = NO_RANK;
      let at = -1;
      let before = -1;
      for (let i = 0, prev = -1; i < n; prev = i, i = next[i]!) {
        if (rank[i]! < best) {
          best = rank[i]!;
          at = i;
          before = prev;
        }
      }
      if (at < 0) break;
      next[at] = next[next[at]!]!;
      rank[at] = pairRank(at);
      if (before >= 0) rank[before] = pairRank(before);
    }
    const starts: number[] = [];
    for (let i = 0; i < n; i = next[i]!) starts.push(i);
    starts.push(n);
    return starts;
  }
}
