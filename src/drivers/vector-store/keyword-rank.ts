// BM25 rankings over the in-memory postings (keyword-postings.ts), as SQLite FTS5's bm25()
// computes them: k1 = 1.2, b = 0.75, IDF floored at 1e-6, lengths against the mean.
//
// The top k by MaxScore: words are taken rarest first; once the k-th best score so far beats what
// the words left could add to a row (each word's most, from the most times a row held it and the
// shortest row holding it), no row that only those words hold can enter, and the rows found that
// still can reach the top k get the words' share from their own word lists. A query's common words
// ("a", "with") then cost nothing but those rows' lookups.
//
// Scores are summed in one order (postings.queryTerms: rarest first) everywhere, so a row's score
// is the same to the last bit however it was reached, and rows that tie, tie exactly.
import { ENTRY, type KeywordPostings, type QueryTerm } from "./keyword-postings.ts";
import { eachWord } from "../store-api/index.ts";

const K1 = 1.2;
const B = 0.75;

export interface Ranked {
  rid: number;
  score: number;
}

type Accept = ((rid: number) => boolean) | null;
type Order = (a: number, b: number) => number;
/** A row's key as a number that orders as `Order` does, or NaN where only `Order` can tell. */
type Key = ((rid: number) => number) | null;

/**
 * `order`, with each row's `key` read once a ranking: ties at the cut compare thousands of rows a
 * query (rows of one kind share a score), each comparison parsing two primary keys otherwise
 * (~0.1 ms a hybrid query at 100k rows).
 */
function keyedOrder(order: Order, key: Key, epoch: number): Order {
  if (key === null) return order;
  const { keys, keyed } = scratch;
  const valueOf = (rid: number) => {
    if (keyed[rid] !== epoch) {
      keyed[rid] = epoch;
      keys[rid] = key(rid);
    }
    return keys[rid]!;
  };
  return (a, b) => {
    const x = valueOf(a);
    const y = valueOf(b);
    if (Number.isNaN(x) || Number.isNaN(y)) return order(a, b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/**
 * Scratch by rid, shared by every ranking (each runs synchronously, start to end): a row's score
 * so far, the ranking that last saw it (negated: filtered out), the rows found, in order, and
 * its key (`keyedOrder`) with the ranking that read it. Grown to the largest rid asked; `slot` is
 * by word id, zero between rankings.
 */
const scratch = { acc: new Float64Array(0), seen: new Int32Array(0), found: new Int32Array(0), slot: new Int32Array(0), keys: new Float64Array(0), keyed: new Int32Array(0), epoch: 0 };

function prepare(p: KeywordPostings): number {
  const n = p.stamps.length;
  if (scratch.acc.length < n) {
    scratch.acc = new Float64Array(n);
    scratch.found = new Int32Array(n);
    scratch.seen = new Int32Array(n);
    scratch.keys = new Float64Array(n);
    scratch.keyed = new Int32Array(n);
    scratch.epoch = 0;
  }
  if (scratch.slot.length < p.lists.length) scratch.slot = new Int32Array(p.lists.length * 2);
  if (scratch.epoch >= 0x3ffffff0) {
    scratch.seen.fill(0);
    scratch.keyed.fill(0);
    scratch.epoch = 0;
  }
  // Two marks a ranking: `epoch` for a row found, `epoch + 1` for one still in the running (completed()).
  scratch.epoch += 2;
  return scratch.epoch;
}

/**
 * BM25's length norm for a row of `length` words, k1·(1 − b + b·length / avgdl), written as FTS5
 * writes it: the same operations in the same order give the same bits, so rows FTS5 ties, tie here.
 */
function norm(length: number, avgdl: number): number {
  return K1 * (1 - B + (B * length) / avgdl);
}

/**
 * The rows holding any of `words` (folded, distinct) that `accept` takes (null: every row), by
 * BM25, highest first, ties by `order`: the best `k`, or with `all`, every such row (a caller that
 * drops rows after the ranking, for a minimum cosine, needs them all). `examined`: the rows scored.
 */
export function rankRows(p: KeywordPostings, words: Iterable<string>, k: number, accept: Accept, byKey: Order, all: boolean, key: Key = null): { ranked: Ranked[]; examined: number } {
  const terms = p.queryTerms(words);
  if (terms.length === 0 || k <= 0) return { ranked: [], examined: 0 };
  const avgdl = p.totalLength / p.rows;
  // What the words from t on could still add to a row they alone hold.
  const rest = new Float64Array(terms.length + 1);
  for (let t = terms.length - 1; t >= 0; t--) {
    const { id, idf } = terms[t]!;
    const tf = p.maxTf[id]!;
    rest[t] = rest[t + 1]! + idf * ((tf * (K1 + 1)) / (tf + norm(p.minLength[id]!, avgdl)));
  }
  const epoch = prepare(p);
  const order = keyedOrder(byKey, key, epoch);
  const { acc, seen, found } = scratch;
  const { stamps, lengths } = p;
  let n = 0;
  let best = 0;
  for (let t = 0; t < terms.length; t++) {
    if (!all && n >= k && best > rest[t]!) {
      const kth = kthScore(acc, found.subarray(0, n), k);
      if (kth > rest[t]!) return { ranked: completed(p, found.subarray(0, n), terms.slice(t), kth - rest[t]!, k, order, epoch), examined: n };
    }
    const { id, idf } = terms[t]!;
    const list = p.lists[id]!;
    const used = p.used[id]!;
    for (let i = 0; i < used; i += ENTRY) {
      const rid = list[i]!;
      if (stamps[rid] !== list[i + 2]) continue;
      const mark = seen[rid]!;
      if (mark === -epoch) continue;
      if (mark !== epoch) {
        if (accept !== null && !accept(rid)) {
          seen[rid] = -epoch;
          continue;
        }
        seen[rid] = epoch;
        acc[rid] = 0;
        found[n++] = rid;
      }
      const tf = list[i + 1]!;
      const score = (acc[rid]! += idf * ((tf * (K1 + 1)) / (tf + norm(lengths[rid]!, avgdl))));
      if (score > best) best = score;
    }
  }
  const rows = found.subarray(0, n);
  return { ranked: all ? ordered(rows, order) : bestOf(rows, k, order), examined: n };
}

/**
 * The end of a pruned ranking: of the rows found, those whose score so far is at least `floor`
 * (the k-th best so far less what the `late` words could add) get the late words' share and are
 * ranked; the others cannot reach the top k. The share is read from the late words' postings, or
 * from those rows' own word lists when that reads less (a common late word, few rows left).
 */
function completed(p: KeywordPostings, found: Int32Array, late: QueryTerm[], floor: number, k: number, order: Order, epoch: number): Ranked[] {
  const { acc, seen } = scratch;
  const maybe: number[] = [];
  // Indexed loops here and below: thousands of rows a query, and for-of on a typed array runs
  // JavaScriptCore's iterator protocol per element.
  for (let f = 0; f < found.length; f++) {
    const rid = found[f]!;
    if (acc[rid]! < floor) continue;
    maybe.push(rid);
    seen[rid] = epoch + 1;
  }
  const avgdl = p.totalLength / p.rows;
  const postings = late.reduce((sum, { id }) => sum + p.used[id]! / ENTRY, 0);
  // A row holds ~ totalLength / rows words, fewer distinct: its list is at most that long.
  if (postings <= maybe.length * (p.totalLength / p.rows)) {
    const { stamps, lengths } = p;
    const mark = epoch + 1;
    for (const { id, idf } of late) {
      const list = p.lists[id]!;
      const used = p.used[id]!;
      for (let i = 0; i < used; i += ENTRY) {
        const rid = list[i]!;
        if (seen[rid] !== mark || stamps[rid] !== list[i + 2]) continue; // stamps: p.current, inlined
        const tf = list[i + 1]!;
        acc[rid]! += idf * ((tf * (K1 + 1)) / (tf + norm(lengths[rid]!, avgdl)));
      }
    }
    return bestOf(maybe, k, order);
  }
  // `slot`: a late word's id → 1 + its place; `tfs`: a row's counts of them, added in order.
  const { slot } = scratch;
  late.forEach(({ id }, i) => (slot[id] = i + 1));
  const tfs = new Int32Array(late.length);
  for (let m = 0; m < maybe.length; m++) {
    const rid = maybe[m]!;
    const doc = p.docs[rid]!;
    for (let j = 0; j < doc.length; j += 2) {
      const at = slot[doc[j]!]!;
      if (at !== 0) tfs[at - 1] = doc[j + 1]!;
    }
    const rowNorm = norm(p.lengths[rid]!, avgdl);
    for (let i = 0; i < late.length; i++) {
      const tf = tfs[i]!;
      if (tf === 0) continue;
      acc[rid]! += late[i]!.idf * ((tf * (K1 + 1)) / (tf + rowNorm));
      tfs[i] = 0;
    }
  }
  for (const { id } of late) slot[id] = 0;
  return bestOf(maybe, k, order);
}

function ordered(rids: ArrayLike<number>, order: Order): Ranked[] {
  return Array.from(rids, (rid) => ({ rid, score: scratch.acc[rid]! })).sort((a, b) => b.score - a.score || order(a.rid, b.rid));
}

/**
 * The best `k` of `rids` in order. Rows of one kind often tie (the same words, the same length):
 * hundreds can share the k-th score, so those are not sorted, only the few needed picked by `order`.
 */
function bestOf(rids: ArrayLike<number>, k: number, order: Order): Ranked[] {
  if (rids.length <= k) return ordered(rids, order);
  const { acc } = scratch;
  const kth = kthScore(acc, rids, k);
  const above: number[] = [];
  const tied: number[] = [];
  for (let i = 0; i < rids.length; i++) {
    const s = acc[rids[i]!]!;
    if (s > kth) above.push(rids[i]!);
    else if (s === kth) tied.push(rids[i]!);
  }
  const need = k - above.length;
  const picked: number[] = [];
  for (let t = 0; t < tied.length; t++) {
    const rid = tied[t]!;
    if (picked.length === need && order(rid, picked[need - 1]!) >= 0) continue;
    let at = Math.min(picked.length, need - 1);
    while (at > 0 && order(rid, picked[at - 1]!) < 0) picked[at] = picked[--at]!;
    picked[at] = rid;
  }
  return ordered(above, order).concat(picked.map((rid) => ({ rid, score: kth })));
}

/** The k-th highest of the rows' scores (k ≤ rows): a min-heap of k, sifted by hand (no allocation per row). */
function kthScore(acc: Float64Array, rids: ArrayLike<number>, k: number): number {
  const heap = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    const s = acc[rids[j]!]!;
    let i = j;
    while (i > 0 && heap[(i - 1) >> 1]! > s) {
      heap[i] = heap[(i - 1) >> 1]!;
      i = (i - 1) >> 1;
    }
    heap[i] = s;
  }
  for (let j = k; j < rids.length; j++) {
    const s = acc[rids[j]!]!;
    if (s <= heap[0]!) continue;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= k) break;
      const m = l + 1 < k && heap[l + 1]! < heap[l]! ? l + 1 : l;
      if (heap[m]! >= s) break;
      heap[i] = heap[m]!;
      i = m;
    }
    heap[i] = s;
  }
  return heap[0]!;
}

/** The rows holding any of `words` that `accept` takes (explain's estimated matches: counted, so exact). */
export function countRows(p: KeywordPostings, words: Iterable<string>, accept: Accept): number {
  const epoch = prepare(p);
  const { seen } = scratch;
  let n = 0;
  for (const { id } of p.queryTerms(words)) {
    const list = p.lists[id]!;
    for (let i = 0; i < p.used[id]!; i += ENTRY) {
      const rid = list[i]!;
      if (!p.current(list, i) || seen[rid] === epoch) continue;
      seen[rid] = epoch;
      if (accept === null || accept(rid)) n++;
    }
  }
  return n;
}

/** The BM25 of a row's current `text` for `words`, as rankRows scores it; null when no word is in it. */
export function scoreText(p: KeywordPostings, words: Iterable<string>, text: string): number | null {
  const wanted = new Set(words);
  const tf = new Map<string, number>();
  let length = 0;
  eachWord(text, (word) => {
    length++;
    if (wanted.has(word)) tf.set(word, (tf.get(word) ?? 0) + 1);
  });
  if (tf.size === 0 || p.rows === 0) return null;
  const avgdl = p.totalLength / p.rows;
  let sum = 0;
  for (const { word, idf } of p.queryTerms(wanted)) {
    const n = tf.get(word);
    if (n !== undefined) sum += idf * ((n * (K1 + 1)) / (n + norm(length, avgdl)));
  }
  return sum;
}
