// Kinds of product for the search set (search-set.ts) beyond the 32 of retrieval-set.ts, written
// the same way: each paraphrase avoids the words of its kind's name and description, so a keyword
// search finds a paraphrase's rows only through filler words ("for", "my"), and the query has to be
// understood to be answered.
import { KINDS as RETRIEVAL_KINDS, type Kind } from "./retrieval-set.ts";

const MORE_KINDS: Kind[] = [
  { name: "hiking backpack", code: "HB", description: "A forty-litre hiking backpack with a hip belt and rain cover.", paraphrase: "a bag to carry my gear up a mountain" },
  { name: "trekking poles", code: "TP", description: "Collapsible trekking poles with cork grips.", paraphrase: "sticks that steady me on steep paths" },
  { name: "headlamp", code: "HL", description: "A rechargeable headlamp with a red night mode.", paraphrase: "a torch I wear so my hands stay free in the dark" },
  { name: "camp stove", code: "CV", description: "A compact gas camp stove with a piezo igniter.", paraphrase: "burner to cook dinner at the campsite" },
  { name: "binoculars", code: "BN", description: "Ten-power binoculars with fog-proof prisms.", paraphrase: "a pair of lenses to watch birds far away" },
  { name: "blender", code: "BL", description: "A countertop blender with a glass jar and pulse setting.", paraphrase: "appliance to whizz fruit into smoothies" },
  { name: "toaster", code: "TO", description: "A two-slot toaster with a bagel setting.", paraphrase: "browns my bread crisp in the morning" },
  { name: "rice cooker", code: "RC", description: "An electric rice cooker with a keep-warm function.", paraphrase: "machine that steams grains perfectly without watching" },
  { name: "air fryer", code: "AF", description: "A five-litre air fryer with a nonstick basket.", paraphrase: "crispy chips with hardly any oil" },
  { name: "cutting board", code: "CB", description: "A reversible cutting board with a juice groove.", paraphrase: "a slab to chop onions on without scratching the counter" },
  { name: "wine glasses", code: "WG", description: "A set of four crystal wine glasses with long stems.", paraphrase: "stemware for a dinner party with a bottle of merlot" },
  { name: "gaming mouse", code: "GM", description: "A gaming mouse with a 16,000 dpi optical sensor.", paraphrase: "precise pointer for shooters on the PC" },
  { name: "computer monitor", code: "CM", description: "A 27-inch computer monitor with a 144 hertz panel.", paraphrase: "big screen to plug my tower into" },
  { name: "external hard drive", code: "XD", description: "A two-terabyte external hard drive with usb 3.0.", paraphrase: "somewhere to back up all my photos" },
  { name: "smartwatch", code: "SW", description: "A smartwatch with heart-rate tracking and GPS.", paraphrase: "a wrist gadget that counts my steps and pulse" },
  { name: "e-reader", code: "ER", description: "An e-reader with a glare-free six-inch display.", paraphrase: "device for reading novels on holiday" },
  { name: "wireless router", code: "WR", description: "A dual-band wireless router with four antennas.", paraphrase: "box that spreads the internet through the flat" },
  { name: "bookshelf", code: "BK", description: "A five-tier bookshelf in solid wood.", paraphrase: "furniture to store my novels upright" },
  { name: "floor rug", code: "FR", description: "A hand-woven floor rug, two by three metres.", paraphrase: "soft covering for the living room boards" },
  { name: "bath towel", code: "BT", description: "A thick cotton bath towel with a hanging loop.", paraphrase: "something absorbent to dry off after a shower" },
  { name: "bed pillow", code: "BP", description: "A memory foam bed pillow with a cooling gel layer.", paraphrase: "where I rest my head at night" },
  { name: "scented candle", code: "SC", description: "A soy scented candle with a cotton wick and lavender notes.", paraphrase: "makes the room smell nice when lit" },
  { name: "wall clock", code: "CL", description: "A silent wall clock with a sweeping second hand.", paraphrase: "tells the time from above the fireplace" },
  { name: "umbrella", code: "UM", description: "A windproof umbrella with an automatic open button.", paraphrase: "keeps the drizzle off my head in town" },
  { name: "wallet", code: "WL", description: "A slim leather wallet with RFID blocking.", paraphrase: "holds my cards and banknotes in a pocket" },
  { name: "sunglasses", code: "SG", description: "Polarized sunglasses with UV400 lenses.", paraphrase: "shades for bright days at the seaside" },
  { name: "winter gloves", code: "WN", description: "Insulated winter gloves with touchscreen fingertips.", paraphrase: "keep my fingers warm while I shovel snow" },
  { name: "wool socks", code: "WS", description: "Merino wool socks with a cushioned heel.", paraphrase: "cosy footwear under my boots" },
  { name: "paint roller", code: "PR", description: "A nine-inch paint roller with an extension pole.", paraphrase: "tool to redecorate the living room walls" },
  { name: "tape measure", code: "TM", description: "A five-metre tape measure with a locking blade.", paraphrase: "check how long a plank is before sawing" },
  { name: "bird feeder", code: "BF", description: "A hanging bird feeder with a squirrel guard.", paraphrase: "put seed out for sparrows in the garden" },
  { name: "fish tank", code: "FT", description: "A sixty-litre fish tank with a filter and LED hood.", paraphrase: "aquarium for goldfish in the lounge" },
];

export const SEARCH_KINDS: Kind[] = [...RETRIEVAL_KINDS, ...MORE_KINDS];
