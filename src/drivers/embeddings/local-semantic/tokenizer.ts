// The tokenizer of `local-semantic-v1`: the Universal Sentence Encoder lite's SentencePiece
// vocabulary (8,000 pieces with their log-probabilities, `▁` marking a word's start), segmented
// the way a unigram language model segments: the split of the text into pieces whose summed
// log-probability is highest (Viterbi over the lattice of vocabulary matches, found with a trie).
//
// Compatibility notes, where the reference tokenizer of @tensorflow-models/universal-sentence-encoder
// and ours agree or part:
// - Both apply NFKC and mark word starts with `▁`. We also fold every run of whitespace to one
//   `▁` and trim the ends, as SentencePiece's own normaliser does (the reference replaces only
//   U+0020, so a newline between two columns became an unknown piece).
// - Ids 0-5 are reserved (0 is the unknown piece); a character no piece covers becomes id 0, and
//   a run of them one id 0.
// - Seven pieces around ":" carry no score (null) in the vocabulary: they are user-defined
//   symbols, which SentencePiece always prefers; like the reference we score them 0.
// Pure and synchronous: it runs in the model's worker, and in tests without the model.

/** The `▁` (U+2581) that starts every word in the vocabulary. */
export const WORD_START = "\u2581";
export const UNKNOWN_ID = 0;
/** Ids below this are control symbols, never produced by segmentation. */
const RESERVED_IDS = 6;

/** The vocabulary as shipped: `[piece, log-probability | null]`, the id being the index. */
export type Vocabulary = readonly (readonly [string, number | null])[];

type TrieNode = { next: Map<number, TrieNode>; id: number; score: number };

const newNode = (): TrieNode => ({ next: new Map(), id: -1, score: 0 });

/** A text's pieces, cut to the limit it was asked for; `tokens` counts those kept. */
export type Encoded = { ids: number[]; tokens: number; truncated: boolean };

export class Tokenizer {
  private readonly root = newNode();
  /** The piece length (in code points) of each id, for walking back the best path. */
  private readonly lengths: number[];
  /** Below every piece's score: an unknown character costs more than any known piece. */
  private readonly unknownScore: number;
  /** The longest piece, in code points: `k` pieces never span more than `k` times this. */
  private readonly longestPiece: number;

  constructor(vocabulary: Vocabulary) {
    let min = 0;
    this.lengths = vocabulary.map(([piece]) => [...piece].length);
    this.longestPiece = Math.max(1, ...this.lengths.slice(RESERVED_IDS));
    for (let id = RESERVED_IDS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id]!;
      let node = this.root;
      for (const ch of piece) {
        const cp = ch.codePointAt(0)!;
        let child = node.next.get(cp);
        if (!child) node.next.set(cp, (child = newNode()));
        node = child;
      }
      node.id = id;
      node.score = score ?? 0;
      min = Math.min(min, node.score);
    }
    this.unknownScore = min - 10; // SentencePiece's own penalty for an unknown piece
  }

  /** The code points the model reads: normalised, whitespace folded, each word marked. */
  static symbols(text: string): number[] {
    const folded = text.normalize("NFKC").replace(/\s+/gu, " ").trim();
    if (folded === "") return [];
    return Array.from(WORD_START + folded.replaceAll(" ", WORD_START), (ch) => ch.codePointAt(0)!);
  }

  /**
   * The best segmentation of `text` into ids, kept to its first `maxTokens` (a cut on a piece
   * boundary: the model never sees half a piece). Only the symbols the kept pieces can span are
   * segmented, so a 256 KiB text costs what its first few KiB cost; the pieces past the first
   * `maxTokens` could differ from a whole-text segmentation only near that far cut.
   */
  encode(text: string, maxTokens = Infinity): Encoded {
    const symbols = Tokenizer.symbols(text);
    const span = maxTokens * this.longestPiece;
    const ids = this.segment(symbols.length > span ? symbols.slice(0, span) : symbols);
    const truncated = symbols.length > span || ids.length > maxTokens;
    const kept = ids.length > maxTokens ? ids.slice(0, maxTokens) : ids;
    return { ids: kept, tokens: kept.length, truncated };
  }

  private segment(symbols: number[]): number[] {
    const n = symbols.length;
    if (n === 0) return [];
    // best[i]: the highest score of a segmentation of symbols[0, i); from[i]: the id ending there.
    const best = new Float64Array(n + 1).fill(-Infinity);
    const from = new Int32Array(n + 1).fill(-1);
    best[0] = 0;
    for (let start = 0; start < n; start++) {
      const base = best[start]!;
      if (base === -Infinity) continue;
      let node: TrieNode | undefined = this.root;
      let covered = false;
      for (let end = start; end < n; end++) {
        node = node.next.get(symbols[end]!);
        if (!node) break;
        if (node.id < 0) continue;
        if (end === start) covered = true;
        const score = base + node.score;
        if (score > best[end + 1]!) {
          best[end + 1] = score;
          from[end + 1] = node.id;
        }
      }
      if (!covered && base + this.unknownScore > best[start + 1]!) {
        best[start + 1] = base + this.unknownScore;
        from[start + 1] = UNKNOWN_ID;
      }
    }
    const reversed: number[] = [];
    for (let end = n; end > 0; ) {
      const id = from[end]!;
      // Consecutive unknown characters are one unknown piece.
      if (!(id === UNKNOWN_ID && reversed.at(-1) === UNKNOWN_ID)) reversed.push(id);
      end -= id === UNKNOWN_ID ? 1 : this.lengths[id]!;
    }
    return reversed.reverse();
  }
}
