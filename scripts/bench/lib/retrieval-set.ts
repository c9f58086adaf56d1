// A small labelled retrieval set for comparing embedding models (`bun run bench embed`): 320
// product rows — 32 kinds of product, 10 of each (brand, finish, colour and a product code vary) —
// and two kinds of query:
// - paraphrase: one per kind of product, written by hand in other words than its rows use ("a
//   coat that keeps me dry in a downpour" for the rain jackets); relevant: the kind's 10 rows.
// - code: a row's product code alone ("RJ-4821"); relevant: that row.
// Deterministic: the same rows, codes and queries on every run (a seeded generator).
//
// `bun run scripts/bench/lib/retrieval-set.ts` prints it as JSON.
import { mulberry32 } from "../../../src/shared/prng.ts";

export type SetRow = { id: number; code: string; name: string; description: string; text: string };
export type SetQuery = { kind: "paraphrase" | "code"; text: string; relevant: number[] };
export type RetrievalSet = { rows: SetRow[]; queries: SetQuery[] };

export type Kind = { name: string; code: string; description: string; paraphrase: string };

// Each paraphrase avoids the words of its rows' name and description.
export const KINDS: Kind[] = [
  { name: "rain jacket", code: "RJ", description: "A waterproof shell jacket with a hood and taped seams.", paraphrase: "a coat that keeps me dry in a downpour" },
  { name: "camping tent", code: "CT", description: "A two-person tent with aluminium poles and a rainfly.", paraphrase: "portable shelter for sleeping in the woods" },
  { name: "sleeping bag", code: "SB", description: "A mummy sleeping bag rated to minus five degrees.", paraphrase: "something warm to crawl into on a cold campout" },
  { name: "water filter", code: "WF", description: "A squeeze water filter that removes bacteria and protozoa.", paraphrase: "make a creek drinkable on the trail" },
  { name: "espresso machine", code: "EM", description: "A pump espresso machine with a steam wand for milk.", paraphrase: "appliance for strong Italian coffee and lattes at home" },
  { name: "coffee grinder", code: "CG", description: "A burr coffee grinder with fifteen grind settings.", paraphrase: "crush roasted beans fresh before brewing" },
  { name: "chef knife", code: "CK", description: "An eight-inch chef knife forged from high-carbon steel.", paraphrase: "a sharp blade for chopping vegetables" },
  { name: "cast iron skillet", code: "CS", description: "A pre-seasoned cast iron skillet for searing and baking.", paraphrase: "heavy pan for frying a steak" },
  { name: "tea kettle", code: "TK", description: "A stovetop tea kettle that whistles when the water boils.", paraphrase: "a pot to heat up for a cup of Earl Grey" },
  { name: "wireless headphones", code: "WH", description: "Over-ear wireless headphones with active noise cancelling.", paraphrase: "cans that block out the sound of the plane" },
  { name: "bluetooth speaker", code: "BS", description: "A portable bluetooth speaker with a twelve-hour battery.", paraphrase: "small box to play music from my phone at the beach" },
  { name: "mechanical keyboard", code: "MK", description: "A mechanical keyboard with tactile switches and backlit keys.", paraphrase: "clicky typing device for programmers" },
  { name: "usb-c charger", code: "UC", description: "A sixty-five watt usb-c charger for phones and laptops.", paraphrase: "power brick to refill my notebook computer" },
  { name: "webcam", code: "WC", description: "A 1080p webcam with a built-in microphone for video calls.", paraphrase: "camera for online meetings with colleagues" },
  { name: "power bank", code: "PB", description: "A 20,000 mAh power bank with two usb ports.", paraphrase: "portable battery to top up my mobile on the go" },
  { name: "desk lamp", code: "DL", description: "An LED desk lamp with adjustable brightness and colour temperature.", paraphrase: "a light for reading at my workstation at night" },
  { name: "office chair", code: "OC", description: "An ergonomic office chair with lumbar support and a mesh back.", paraphrase: "comfortable seat for long hours at the computer" },
  { name: "standing desk", code: "SD", description: "An electric standing desk that rises from sitting to standing height.", paraphrase: "a table I can raise to work on my feet" },
  { name: "yoga mat", code: "YM", description: "A non-slip yoga mat six millimetres thick.", paraphrase: "cushioned surface for stretching and pilates" },
  { name: "dumbbell set", code: "DS", description: "An adjustable dumbbell set from two to twenty kilograms.", paraphrase: "free weights for strength training at home" },
  { name: "running shoes", code: "RS", description: "Lightweight running shoes with a cushioned sole.", paraphrase: "sneakers for jogging a marathon" },
  { name: "bicycle helmet", code: "BH", description: "A ventilated bicycle helmet with a rear light.", paraphrase: "head protection for cycling to work" },
  { name: "garden hose", code: "GH", description: "A fifty-foot expandable garden hose with a spray nozzle.", paraphrase: "a long tube for watering plants in the yard" },
  { name: "lawn mower", code: "LM", description: "A cordless lawn mower with a forty-centimetre cutting deck.", paraphrase: "machine to trim the grass" },
  { name: "pruning shears", code: "PS", description: "Bypass pruning shears for branches up to two centimetres.", paraphrase: "clippers for trimming rose bushes" },
  { name: "dog bed", code: "DB", description: "An orthopedic dog bed with a washable cover.", paraphrase: "a comfy place for my puppy to nap" },
  { name: "cat litter box", code: "LB", description: "A covered cat litter box with a carbon filter.", paraphrase: "a toilet for my kitten that keeps smells in" },
  { name: "baby stroller", code: "BR", description: "A folding baby stroller with a reclining seat.", paraphrase: "pushchair for taking an infant on walks" },
  { name: "cordless drill", code: "CD", description: "An eighteen-volt cordless drill with two batteries.", paraphrase: "power tool for making holes in walls and driving screws" },
  { name: "smoke detector", code: "SM", description: "A battery-powered smoke detector with a ten-year sensor.", paraphrase: "alarm that warns of a fire in the house" },
  { name: "electric toothbrush", code: "ET", description: "A rechargeable electric toothbrush with a two-minute timer.", paraphrase: "something that buzzes to clean my teeth" },
  { name: "hair dryer", code: "HD", description: "A 2000-watt hair dryer with a cool-shot button.", paraphrase: "to blow out my wet locks after a shower" },
];

export const BRANDS = ["Alder", "Birch", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper"];
const FINISHES = ["Classic", "Compact", "Pro", "Lite", "Deluxe", "Everyday", "Travel", "Max"];
export const COLOURS = ["black", "white", "slate grey", "forest green", "navy blue", "sand", "red", "orange"];

export const VARIANTS = BRANDS.length;

export function retrievalSet(): RetrievalSet {
  const next = mulberry32(20_261_128);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const codes = new Set<string>();
  const rows: SetRow[] = [];
  const queries: SetQuery[] = [];
  for (const kind of KINDS) {
    const ids: number[] = [];
    for (const brand of BRANDS) {
      let code: string;
      do code = `${kind.code}-${1000 + Math.floor(next() * 9000)}`;
      while (codes.has(code));
      codes.add(code);
      const id = rows.length + 1;
      const name = `${brand} ${pick(FINISHES)} ${kind.name} ${code}`;
      const description = `${kind.description} Finished in ${pick(COLOURS)}.`;
      rows.push({ id, code, name, description, text: `${name}\n${description}` });
      ids.push(id);
    }
    queries.push({ kind: "paraphrase", text: kind.paraphrase, relevant: ids });
    const target = rows[ids[Math.floor(next() * ids.length)]! - 1]!;
    queries.push({ kind: "code", text: target.code, relevant: [target.id] });
  }
  return { rows, queries };
}

/** Recall@k (of min(relevant, k) findable) and binary nDCG@k of one ranking of row ids. */
export function scoreRanking(ranked: number[], relevant: number[], k = 10): { recall: number; ndcg: number } {
  const wanted = new Set(relevant);
  const top = ranked.slice(0, k);
  const hits = top.filter((id) => wanted.has(id)).length;
  const dcg = top.reduce((sum, id, i) => sum + (wanted.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(k, wanted.size); i++) ideal += 1 / Math.log2(i + 2);
  return { recall: hits / Math.min(k, wanted.size), ndcg: dcg / ideal };
}

if (import.meta.main) console.log(JSON.stringify(retrievalSet(), null, 2));
