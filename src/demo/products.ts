// The demo's sample source table: 200 products made from fixed word lists, so every run (and the
// demo's test) sees the same rows, the same vectors and the same query answers.
import { mulberry32 } from "../shared/prng.ts";

export type Product = { id: number; name: string; description: string; category: string; price: number; in_stock: boolean };

export const PRODUCT_COUNT = 200;

type Category = { category: string; items: string[]; uses: string[]; materials: string[] };

const CATEGORIES: Category[] = [
  {
    category: "kitchen",
    items: ["espresso machine", "coffee grinder", "chef knife", "cast iron skillet", "tea kettle", "stand mixer", "bread knife", "pour-over coffee dripper"],
    uses: ["brewing rich coffee every morning", "slicing vegetables and bread", "searing steaks and baking cornbread", "boiling water for tea in minutes"],
    materials: ["stainless steel", "cast iron", "walnut wood", "borosilicate glass", "ceramic"],
  },
  {
    category: "outdoors",
    items: ["hiking backpack", "camping tent", "rain jacket", "trekking pole set", "sleeping bag", "camping lantern", "water filter", "trail running shoes"],
    uses: ["multi-day hiking trips in the mountains", "camping in wet and windy weather", "staying dry on rainy trails", "clean drinking water in the backcountry"],
    materials: ["waterproof nylon", "recycled polyester", "aluminium", "ripstop fabric", "merino wool"],
  },
  {
    category: "electronics",
    items: ["wireless headphones", "bluetooth speaker", "mechanical keyboard", "usb-c charger", "noise cancelling earbuds", "4k monitor", "webcam", "portable power bank"],
    uses: ["music and calls with active noise cancelling", "long battery life on the go", "typing and gaming at your desk", "fast charging for phones and laptops"],
    materials: ["recycled plastic", "aluminium", "matte black steel", "soft-touch silicone"],
  },
  {
    category: "books",
    items: ["science fiction novel", "cookbook", "field guide to birds", "history of coffee", "mountain climbing memoir", "beginner guitar course"],
    uses: ["reading on long train rides", "learning new recipes for the kitchen", "identifying birds on weekend walks", "a gift for curious readers"],
    materials: ["hardcover binding", "recycled paper", "a lay-flat spine", "full-colour photographs"],
  },
  {
    category: "toys",
    items: ["building blocks set", "wooden train", "puzzle cube", "kite", "remote control car", "board game"],
    uses: ["hours of creative play for kids", "family game nights", "flying at the beach on windy days", "rainy afternoons indoors"],
    materials: ["beech wood", "recycled plastic", "organic cotton", "bamboo"],
  },
];

const ADJECTIVES = ["Classic", "Compact", "Premium", "Lightweight", "Rugged", "Everyday", "Deluxe", "Eco"];

/** The same id always gives the same product. */
function picker(seed: number) {
  const next = mulberry32(seed);
  return <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a");

/** Product `id` (1-based); every field follows from the id. */
export function product(id: number): Product {
  const pick = picker(id * 2654435761);
  const c = CATEGORIES[id % CATEGORIES.length]!;
  const item = pick(c.items);
  const adjective = pick(ADJECTIVES);
  const material = pick(c.materials);
  const use = pick(c.uses);
  return {
    id,
    name: `${adjective} ${item}`,
    description: `${article(adjective)} ${adjective.toLowerCase()} ${item} with ${material}, great for ${use}.`.replace(/^./, (ch) => ch.toUpperCase()),
    category: c.category,
    price: Number((4.99 + Math.floor(pick(PRICE_STEPS)) * 5).toFixed(2)),
    in_stock: pick([true, true, true, false]),
  };
}

/** Prices 4.99 … 299.99 in $5 steps, independent of the category. */
const PRICE_STEPS = Array.from({ length: 60 }, (_, i) => i);

export const products = (): Product[] => Array.from({ length: PRODUCT_COUNT }, (_, i) => product(i + 1));

/** The row the demo edits to show sync at work, and what it becomes. */
export const EDITED_PRODUCT_ID = 42;
export const EDITED_PRODUCT = {
  name: "Glow-in-the-dark cactus lantern",
  category: "outdoors",
  description: "A solar powered camping lantern shaped like a cactus that glows in the dark all night.",
  price: 24.5,
};
