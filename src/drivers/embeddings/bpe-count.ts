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

export class BpeCounter {
  private readonly ranks = new Map<string, number>();
  private readonly split: RegExp;

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
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      const bytes = this.binary(match[0]);
      tokens += this.ranks.has(bytes) ? 1 : this.merged(bytes);
    }
    return tokens;
  }

  /** The piece's UTF-8 bytes as a binary string: ASCII as it is. */
  private binary(piece: string): string {
    for (let i = 0; i < piece.length; i++) {
      if (piece.charCodeAt(i) > 0x7f) return Buffer.from(piece, "utf8").toString("latin1");
    }
    return piece;
  }

  /** Parts left after merging a piece's bytes, the lowest-ranked adjacent pair first. */
  private merged(bytes: string): number {
    // Part k is bytes[starts[k], starts[k + 1]); pairs[k] the rank of parts k and k + 1 joined.
    const starts = Array.from({ length: bytes.length + 1 }, (_, i) => i);
    const pairRank = (k: number) => (k + 2 < starts.length ? (this.ranks.get(bytes.slice(starts[k]!, starts[k + 2]!)) ?? Infinity) : Infinity);
    const pairs = Array.from({ length: bytes.length - 1 }, (_, k) => pairRank(k));
    for (;;) {
      let best = Infinity;
      let at = -1;
      for (let k = 0; k < pairs.length; k++) {
        if (pairs[k]! < best) {
          best = pairs[k]!;
          at = k;
        }
      }
      if (at < 0) return starts.length - 1;
      starts.splice(at + 1, 1);
      pairs.splice(at, 1);
      if (at < pairs.length) pairs[at] = pairRank(at);
      if (at > 0) pairs[at - 1] = pairRank(at - 1);
    }
  }
}
