// The in-memory keyword ranking (keyword-postings.ts, keyword-rank.ts) against brute force on a table big enough
// for its pruning to work: Zipf-drawn words (some in most rows, many in few), rows replaced and
// removed so stale postings pile up, filters, ties, and k from 1 to past the matches.
import { describe, expect, test } from "bun:test";
import { KeywordPostings } from "../../../../src/drivers/vector-store/keyword-postings.ts";
import { countRows, rankRows, scoreText } from "../../../../src/drivers/vector-store/keyword-rank.ts";
import { rng } from "../helpers.ts";

const VOCAB = Array.from({ length: 300 }, (_, i) => `w${i}`);

function textOf(rand: () => number): string {
  const length = 1 + Math.floor(rand() * 25);
  // Word i drawn with weight ∝ 1/(i+1)²·⁵ past the first few: a long tail of rare words.
  return Array.from({ length }, () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(1 / Math.pow(rand() + 1e-9, 0.9)) - 1)]!).join(" ");
}

function brute(texts: Map<number, string>, words: string[], accept: (rid: number) => boolean): { rid: number; score: number }[] {
  const docs = [...texts].map(([rid, text]) => ({ rid, tokens: text.split(" ") }));
  const n = docs.length;
  const avgdl = docs.reduce((s, d) => s + d.tokens.length, 0) / n;
  const idfOf = (w: string) => {
    const held = docs.filter((d) => d.tokens.includes(w)).length;
    const idf = Math.log((n - held + 0.5) / (held + 0.5));
    return { w, held, idf: idf <= 0 ? 1e-6 : idf };
  };
  const terms = words.map(idfOf).filter((t) => t.held > 0);
  const out: { rid: number; score: number }[] = [];
  for (const d of docs) {
    if (!accept(d.rid)) continue;
    let score = 0;
    let matched = false;
    for (const { w, idf } of terms) {
      const tf = d.tokens.filter((t) => t === w).length;
      if (tf === 0) continue;
      matched = true;
      score += idf * ((tf * 2.2) / (tf + 1.2 * (1 - 0.75 + (0.75 * d.tokens.length) / avgdl)));
    }
    if (matched) out.push({ rid: d.rid, score });
  }
  return out.sort((a, b) => b.score - a.score || a.rid - b.rid);
}

describe("keyword postings", () => {
  test("top k equals brute force after writes, with filters, ties and every k", () => {
    const rand = rng(42);
    const postings = new KeywordPostings();
    const texts = new Map<number, string>();
    for (let rid = 0; rid < 3000; rid++) {
      const text = textOf(rand);
      postings.add(rid, text);
      texts.set(rid, text);
    }
    // Replace a fifth of the rows (some twice), remove a tenth, and add rows past the end.
    for (let i = 0; i < 900; i++) {
      const rid = Math.floor(rand() * 3000);
      const text = textOf(rand);
      postings.add(rid, text);
      texts.set(rid, text);
    }
    for (let i = 0; i < 300; i++) {
      const rid = Math.floor(rand() * 3000);
      postings.remove(rid);
      texts.delete(rid);
    }
    for (let rid = 5000; rid < 5300; rid++) {
      const text = rid % 2 === 0 ? "w0 w1" : textOf(rand); // many rows tied on the common words
      postings.add(rid, text);
      texts.set(rid, text);
    }
    expect(postings.rows).toBe(texts.size);
    const queries = [["w0"], ["w0", "w1"], ["w250"], ["w3", "w77", "w0"], ["w120", "w5", "w1", "w2"], ["nothing"], ["w299", "w0", "w2", "w9", "w40"]];
    const filters: [string, (rid: number) => boolean][] = [
      ["none", () => true],
      ["a third", (rid) => rid % 3 === 0],
      ["a few", (rid) => rid % 97 === 0],
    ];
    let pruned = 0;
    for (const words of queries) {
      for (const [, accept] of filters) {
        const want = brute(texts, words, accept);
        for (const k of [1, 5, 10, 100, 5000]) {
          const { ranked, examined } = rankRows(postings, words, k, accept, (a, b) => a - b, false);
          if (examined < want.length) pruned++;
          // Exactly the best k, ties at the cut settled by the order (rid here).
          expect(ranked.map((r) => r.rid)).toEqual(want.slice(0, k).map((r) => r.rid));
          ranked.forEach((r, i) => expect(r.score).toBeCloseTo(want[i]!.score, 9));
          // `all`: every matching row, in order.
          if (k === 10) expect(rankRows(postings, words, k, accept, (a, b) => a - b, true).ranked.map((r) => r.rid)).toEqual(want.map((r) => r.rid));
          // The same order given keys read once a ranking: a number for most rows, NaN (the order decides) for every seventh.
          const keyed = rankRows(postings, words, k, accept, (a, b) => a - b, false, (rid) => (rid % 7 === 0 ? NaN : rid));
          expect(keyed.ranked.map((r) => r.rid)).toEqual(want.slice(0, k).map((r) => r.rid));
        }
        expect(countRows(postings, words, accept)).toBe(want.length);
      }
    }
    // The pruning ran (or this test proves only the exhaustive path).
    expect(pruned).toBeGreaterThan(10);
  });

  test("long rows, and rows rewritten many times over (stale postings dropped)", () => {
    const rand = rng(7);
    const postings = new KeywordPostings();
    const texts = new Map<number, string>();
    const long = () => Array.from({ length: 3 }, () => textOf(rand)).join(" ") + " " + textOf(rand);
    for (let rid = 0; rid < 1500; rid++) {
      texts.set(rid, long());
      postings.add(rid, texts.get(rid)!);
    }
    // The same 300 rows rewritten 12 times: most of their words' postings go stale.
    for (let round = 0; round < 12; round++) {
      for (let rid = 0; rid < 300; rid++) {
        texts.set(rid, round % 3 === 2 ? "w1 w2" : long());
        postings.add(rid, texts.get(rid)!);
      }
    }
    for (const words of [["w0"], ["w2", "w0"], ["w9", "w1", "w0"], ["w30", "w3", "w1"], ["w150", "w60", "w4", "w0"]]) {
      for (const k of [1, 10, 50]) {
        const want = brute(texts, words, () => true);
        const { ranked } = rankRows(postings, words, k, null, (a, b) => a - b, false);
        expect(ranked.map((r) => r.rid)).toEqual(want.slice(0, k).map((r) => r.rid));
        ranked.forEach((r, i) => expect(r.score).toBe(scoreText(postings, words, texts.get(r.rid)!)!));
      }
    }
    // Stale postings did not pile up: the lists hold about the live rows' postings.
    const live = [...texts.values()].reduce((n, t) => n + new Set(t.split(" ")).size, 0);
    const held = postings.used.reduce((n, u) => n + u / 3, 0);
    expect(held).toBeLessThan(3 * live);
  });

  test("filled in steps while rows change: writes below the cursor come from the mirror, above it from the texts", async () => {
    const rand = rng(11);
    const texts = new Map<number, string>();
    for (let rid = 0; rid < 9000; rid++) texts.set(rid, textOf(rand));
    const postings = new KeywordPostings();
    // The mirror's part: a write changes the text, and reaches the postings only below the cursor.
    const write = (rid: number, text: string | undefined) => {
      if (text === undefined) texts.delete(rid);
      else texts.set(rid, text);
      if (!postings.covers(rid)) return;
      if (text === undefined) postings.remove(rid);
      else postings.add(rid, text);
    };
    let end = 9000;
    const filling = postings.fill(() => end, (rid) => texts.get(rid), () => true, () => new Promise<void>((resolve) => setImmediate(resolve)));
    expect(postings.whole).toBe(false);
    // Writes between the fill's steps, on rows behind and ahead of it, and rows past its first end.
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 200; i++) {
        const rid = Math.floor(rand() * end);
        write(rid, rand() < 0.2 ? undefined : textOf(rand));
      }
      write(end, textOf(rand));
      end++;
    }
    await filling;
    expect(postings.whole).toBe(true);
    write(end, "w0 w250"); // after the fill: every write comes from the mirror
    end++;
    expect(postings.rows).toBe(texts.size);
    for (const words of [["w0"], ["w3", "w250"], ["w17", "w1", "w0"]]) {
      const want = brute(texts, words, () => true);
      expect(rankRows(postings, words, 10, null, (a, b) => a - b, false).ranked.map((r) => r.rid)).toEqual(want.slice(0, 10).map((r) => r.rid));
    }
  });

  test("a row's score from its text equals its ranking score", () => {
    const postings = new KeywordPostings();
    const rows = ["red fox", "red red hen", "blue hen", "fox", "the red the blue the fox"];
    rows.forEach((t, rid) => postings.add(rid, t));
    const { ranked } = rankRows(postings, ["red", "fox"], 10, () => true, (a, b) => a - b, false);
    for (const r of ranked) expect(scoreText(postings, ["red", "fox"], rows[r.rid]!)).toBe(r.score);
    expect(scoreText(postings, ["red", "fox"], "blue hen")).toBeNull();
  });
});
