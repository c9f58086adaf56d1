// The keyword index in memory (README.md "keyword postings"): a generation's words,
// kept by the mirror beside its f32 vectors (mirror.ts set/remove) and ranked by keyword-rank.ts
// with FTS5's BM25 (keyword-index.ts): the same tokens (words.ts), the same row count, average
// length and IDF floor, so both rank alike. FTS5 stays the durable index, and answers while a
// generation loads or once its mirror is compact (keyword-search.ts).
//
// Why in memory: FTS5 scores every row holding any of the query's words, so a query with a common
// word scored most of the table (38 ms p50 at 100k rows, docs/performance.md#search).
import { eachWord } from "../store-api/index.ts";

/** FTS5's floor for the IDF of a word in half the rows or more. */
const IDF_FLOOR = 1e-6;
/** A posting: [rid, tf, stamp]. A row's stamp moves on each change, so its older postings are skipped. */
export const ENTRY = 3;

/** Rows indexed a background step while the postings are filled (~10 µs a row: ~20 ms a step). */
const FILL_STEP = 2048;

/** A new word's postings until its first row: most words (codes, names) are in one row or few. */
const EMPTY = new Int32Array(0);

export interface QueryTerm {
  word: string;
  id: number;
  idf: number;
}

/**
 * Written only through add() and remove(); the fields are read by keyword-rank.ts. An array may be
 * replaced when it grows, so a reader takes them afresh for each ranking.
 */
export class KeywordPostings {
  private readonly termIds = new Map<string, number>();
  /** Per word: its postings, the ints of them in use, and the rows holding it now. */
  lists: Int32Array[] = [];
  used: number[] = [];
  df: number[] = [];
  /** Per word: the most times a row has held it, and the fewest words of a row holding it (never lowered: bounds). */
  maxTf: number[] = [];
  minLength: number[] = [];
  /** Per rid: [word id, tf, …] of its current text; undefined when the row is not here. */
  docs: (Int32Array | undefined)[] = [];
  lengths = new Float64Array(1024);
  stamps = new Int32Array(1024);
  rows = 0;
  totalLength = 0;
  /** Rows below this rid are indexed: the mirror's writes to them come here, the others are read by fill(). */
  private cursor = 0;
  /** add()'s scratch: counts by word id, zero between calls. */
  private tf = new Int32Array(1024);

  /** All the rows are in: rankings may read them. */
  get whole(): boolean {
    return this.cursor === Infinity;
  }

  /** Are `rid`'s writes the mirror's to bring here (fill() has passed it)? */
  covers(rid: number): boolean {
    return rid < this.cursor;
  }

  /**
   * Indexes the rows below `end()` (their texts from `textOf`, undefined for a row not live) in
   * background steps, then takes every later write from the mirror. Stops when `alive` says so.
   */
  async fill(end: () => number, textOf: (rid: number) => string | undefined, alive: () => boolean, turn: () => Promise<void>): Promise<void> {
    while (this.cursor < end()) {
      const until = Math.min(end(), this.cursor + FILL_STEP);
      for (let rid = this.cursor; rid < until; rid++) {
        const text = textOf(rid);
        if (text !== undefined) this.add(rid, text);
      }
      this.cursor = until;
      await turn();
      if (!alive()) return;
    }
    this.cursor = Infinity;
  }

  /** Indexes a row's text (replacing what it held). */
  add(rid: number, text: string): void {
    this.remove(rid);
    this.ensure(rid);
    // Counted by word id in a scratch array, not a map per row: a backfill adds every row it writes.
    const touched: number[] = [];
    let length = 0;
    eachWord(text, (word) => {
      const id = this.termIds.get(word) ?? this.newTerm(word);
      const before = this.tf[id]!;
      this.tf[id] = before + 1;
      if (before === 0) touched.push(id);
      length++;
    });
    const doc = new Int32Array(touched.length * 2);
    const stamp = this.stamps[rid]!;
    touched.forEach((id, i) => {
      const tf = this.tf[id]!;
      this.tf[id] = 0;
      doc[2 * i] = id;
      doc[2 * i + 1] = tf;
      this.df[id]!++;
      if (tf > this.maxTf[id]!) this.maxTf[id] = tf;
      if (length < this.minLength[id]!) this.minLength[id] = length;
      this.post(id, rid, tf, stamp);
    });
    this.docs[rid] = doc;
    this.lengths[rid] = length;
    this.rows++;
    this.totalLength += length;
  }

  remove(rid: number): void {
    const doc = this.docs[rid];
    if (doc === undefined) return;
    for (let i = 0; i < doc.length; i += 2) this.df[doc[i]!]!--;
    this.docs[rid] = undefined;
    this.stamps[rid] = (this.stamps[rid]! + 1) | 0;
    this.rows--;
    this.totalLength -= this.lengths[rid]!;
  }

  /** The query's words that some row holds, with their IDF, rarest first (the order scores are summed in). */
  queryTerms(words: Iterable<string>): QueryTerm[] {
    const out: QueryTerm[] = [];
    for (const word of words) {
      const id = this.termIds.get(word);
      if (id === undefined || this.df[id]! === 0) continue;
      const idf = Math.log((this.rows - this.df[id]! + 0.5) / (this.df[id]! + 0.5));
      out.push({ word, id, idf: idf <= 0 ? IDF_FLOOR : idf });
    }
    // Highest IDF first, equal IDFs by word (code units): an order a platform table's SQL repeats.
    return out.sort((a, b) => b.idf - a.idf || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
  }

  /** Is the posting at `i` of `list` its row's current one? */
  current(list: Int32Array, i: number): boolean {
    return this.stamps[list[i]!] === list[i + 2];
  }

  bytes(): number {
    let ints = 0;
    for (const list of this.lists) ints += list.length;
    for (const doc of this.docs) ints += doc?.length ?? 0;
    return ints * 4 + this.lists.length * 96 + this.docs.length * 8 + this.stamps.length * 12 + this.tf.length * 4;
  }

  private newTerm(word: string): number {
    const id = this.lists.length;
    this.termIds.set(word, id);
    this.lists.push(EMPTY);
    this.used.push(0);
    this.df.push(0);
    this.maxTf.push(0);
    this.minLength.push(Infinity);
    if (id >= this.tf.length) this.tf = grown(this.tf, id + 1);
    return id;
  }

  private ensure(rid: number): void {
    if (rid < this.stamps.length) return;
    const n = Math.max(rid + 1, Math.ceil(this.stamps.length * 1.5));
    const lengths = new Float64Array(n);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const stamps = new Int32Array(n);
    stamps.set(this.stamps);
    this.stamps = stamps;
  }

  private post(id: number, rid: number, tf: number, stamp: number): void {
    let list = this.lists[id]!;
    let used = this.used[id]!;
    if (used + ENTRY > list.length) {
      // Full: drop the stale postings first if they are most of it, else double it.
      if (used > 2 * ENTRY * (this.df[id]! + 1)) used = this.dropStale(list, used);
      if (used + ENTRY > list.length) list = this.lists[id] = grown(list.subarray(0, used), Math.max(2 * ENTRY, 2 * list.length));
    }
    list[used] = rid;
    list[used + 1] = tf;
    list[used + 2] = stamp;
    this.used[id] = used + ENTRY;
  }

  private dropStale(list: Int32Array, used: number): number {
    let kept = 0;
    for (let i = 0; i < used; i += ENTRY) {
      if (!this.current(list, i) || this.docs[list[i]!] === undefined) continue;
      list.copyWithin(kept, i, i + ENTRY);
      kept += ENTRY;
    }
    return kept;
  }
}

function grown(a: Int32Array, min: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(min, a.length * 2));
  b.set(a);
  return b;
}
