// The labelled set of `bun run bench search`: product-like rows and queries with graded relevance,
// to compare the query modes (vector, keyword, hybrid) and choose hybrid's default weight.
//
// Rows: the 64 kinds of search-kinds.ts × `rows / 64` variants (3,008 by default). A variant has a
// brand, a finish, a colour, a material, a size, a product code ("RJ-4821") and a made-up model
// word met nowhere else ("Quorvel"): a row's text is
//   Cobalt Pro rain jacket Quorvel RJ-4821
//   A waterproof shell jacket with a hood and taped seams. Recycled nylon, navy blue, size M.
// Queries, six a kind (384 by default), of three kinds:
// - code: one row's product code alone, or its model word alone. Grade 2 for that row, nothing
//   else relevant (its siblings share the kind's words but are not what was asked for).
// - paraphrase: the kind's hand-written paraphrase (no word of its rows). Grade 1 for the kind's rows.
// - mixed: the paraphrase with "from <brand>", "in <colour or material>" or "the <model word> one".
//   Grade 2 for the kind's rows with that brand / colour / material, or for the row with that model
//   word; grade 1 for the kind's other rows.
// nDCG@10 uses gains 2^grade − 1; recall@10 counts rows of grade ≥ 1 found, of min(10, relevant).
//
// Deterministic: a seeded generator, SEARCH_SET_SEED unless a seed is given. The tests must not tune
// against it: a test building a set gives its own seed. `bun run scripts/bench/lib/search-set.ts`
// prints the set as JSON.
import { mulberry32 } from "../../../src/shared/prng.ts";
import { BRANDS, COLOURS } from "./retrieval-set.ts";
import { SEARCH_KINDS } from "./search-kinds.ts";

export const SEARCH_SET_SEED = 20_261_129;
export const QUERY_KINDS = ["code", "paraphrase", "mixed"] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export type SearchRow = { id: number; kind: number; brand: string; colour: string; material: string; code: string; model: string; text: string };
/** `grades`: row id → grade (1 or 2); a row not listed is grade 0. */
export type SearchQuery = { kind: QueryKind; text: string; grades: Map<number, number> };
export type SearchSet = { rows: SearchRow[]; queries: SearchQuery[] };

const FINISHES = ["Classic", "Compact", "Pro", "Lite", "Deluxe", "Everyday", "Travel", "Max"];
const MATERIALS = ["recycled nylon", "bamboo", "stainless steel", "walnut", "canvas", "titanium", "cork", "linen"];
const SIZES = ["XS", "S", "M", "L", "XL"];
// Syllables of the made-up model words: pronounceable, and not English words once joined.
const SYLLABLES = ["qua", "zor", "vel", "trix", "nob", "kel", "dra", "vyn", "plo", "sku", "mir", "thax", "jub", "orn", "fex", "gli", "wun", "zed", "bry", "coz", "lum", "rasp", "tov", "yx"];

export function searchSet(rowCount = 3_000, seed = SEARCH_SET_SEED): SearchSet {
  const next = mulberry32(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  // `rowCount` is rounded to whole kinds: 3,000 → 47 variants a kind, 3,008 rows.
  const variants = Math.max(1, Math.round(rowCount / SEARCH_KINDS.length));
  // Four digits while a kind's codes fit in them with room to spare; six for the latency set's 100k.
  const codeSpan = variants * 4 < 9000 ? 9000 : 900_000;
  const codes = new Set<string>();
  const words = new Set<string>();
  const rows: SearchRow[] = [];
  const queries: SearchQuery[] = [];
  SEARCH_KINDS.forEach((kind, k) => {
    const own: SearchRow[] = [];
    for (let v = 0; v < variants; v++) {
      let code: string;
      do code = `${kind.code}-${codeSpan / 9 + Math.floor(next() * codeSpan)}`;
      while (codes.has(code));
      codes.add(code);
      let model: string;
      do model = modelWord(next, variants > 200);
      while (words.has(model));
      words.add(model);
      const [brand, colour, material] = [pick(BRANDS), pick(COLOURS), pick(MATERIALS)];
      const name = `${brand} ${pick(FINISHES)} ${kind.name} ${model} ${code}`;
      const details = `${kind.description} ${material[0]!.toUpperCase()}${material.slice(1)}, ${colour}, size ${pick(SIZES)}.`;
      const row = { id: rows.length + 1, kind: k, brand, colour, material, code, model, text: `${name}\n${details}` };
      rows.push(row);
      own.push(row);
    }
    const one = () => own[Math.floor(next() * own.length)]!;
    const kindGrades = (best: (r: SearchRow) => boolean) => new Map(own.map((r) => [r.id, best(r) ? 2 : 1]));
    const coded = one();
    queries.push({ kind: "code", text: coded.code, grades: new Map([[coded.id, 2]]) });
    const named = one();
    queries.push({ kind: "code", text: named.model, grades: new Map([[named.id, 2]]) });
    queries.push({ kind: "paraphrase", text: kind.paraphrase, grades: kindGrades(() => false) });
    const branded = one().brand;
    queries.push({ kind: "mixed", text: `${kind.paraphrase} from ${branded}`, grades: kindGrades((r) => r.brand === branded) });
    // Colour for even kinds, material for odd ones: both kinds of attribute, one query a kind.
    const attr = one();
    const [value, has] = k % 2 === 0 ? [attr.colour, (r: SearchRow) => r.colour === attr.colour] : [attr.material, (r: SearchRow) => r.material === attr.material];
    queries.push({ kind: "mixed", text: `${kind.paraphrase} in ${value}`, grades: kindGrades(has) });
    const modelled = one();
    queries.push({ kind: "mixed", text: `${kind.paraphrase}, the ${modelled.model} one`, grades: kindGrades((r) => r.id === modelled.id) });
  });
  return { rows, queries };
}

/** Two or three syllables (14,400 words); three or four for big sets, which need more words. */
function modelWord(next: () => number, big: boolean): string {
  const n = (big ? 3 : 2) + Math.floor(next() * 2);
  const word = Array.from({ length: n }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]!).join("");
  return word[0]!.toUpperCase() + word.slice(1);
}

/** nDCG@k with gains 2^grade − 1 and recall@k of the grade ≥ 1 rows, for one ranking of row ids. */
export function gradeRanking(ranked: number[], grades: Map<number, number>, k = 10): { ndcg: number; recall: number } {
  const gain = (g: number) => 2 ** g - 1;
  const top = ranked.slice(0, k);
  const dcg = top.reduce((sum, id, i) => sum + gain(grades.get(id) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...grades.values()].sort((a, b) => b - a).slice(0, k).reduce((sum, g, i) => sum + gain(g) / Math.log2(i + 2), 0);
  const found = top.filter((id) => (grades.get(id) ?? 0) >= 1).length;
  return { ndcg: ideal > 0 ? dcg / ideal : 0, recall: found / Math.min(k, grades.size) };
}

if (import.meta.main) {
  const set = searchSet(Number(process.argv[2] ?? 3_000));
  console.log(JSON.stringify({ rows: set.rows, queries: set.queries.map((q) => ({ ...q, grades: Object.fromEntries(q.grades) })) }, null, 2));
}
