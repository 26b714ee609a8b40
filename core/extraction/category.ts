// Product categories in customer text: an explicit `category: X`, the category names, or product keywords.

/** Product keywords per category; plural forms (`-s`, `-es`) match too. */
const CATEGORY_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  electronics: [
    "electronics",
    "electronic",
    "laptop",
    "notebook computer",
    "computer",
    "pc",
    "phone",
    "smartphone",
    "iphone",
    "mobile phone",
    "tablet",
    "ipad",
    "screen",
    "monitor",
    "display",
    "headphone",
    "headset",
    "earbud",
    "earphone",
    "tv",
    "television",
    "camera",
    "console",
    "charger",
    "speaker",
    "keyboard",
    "mouse",
    "printer",
    "router",
    "smartwatch",
    "e-reader",
    "hard drive",
    "ssd",
    // German, French, Spanish
    "fernseher",
    "téléviseur",
    "televisor",
    "ordinateur",
    "ordenador",
  ],
  clothing: [
    "clothing",
    "clothes",
    "apparel",
    "shirt",
    "t-shirt",
    "tshirt",
    "blouse",
    "jacket",
    "coat",
    "shoe",
    "sneaker",
    "boots",
    "sandal",
    "dress",
    "jeans",
    "trouser",
    "pants",
    "sweater",
    "jumper",
    "hoodie",
    "sock",
    "hat",
    "skirt",
    "scarf",
    "glove",
    "shorts",
    // German, French, Spanish
    "hemd",
    "hemden",
    "chemise",
    "camisa",
    "camiseta",
    "pantalon",
  ],
  home: [
    "home goods",
    "homeware",
    "household",
    "home appliance",
    "furniture",
    "sofa",
    "couch",
    "lamp",
    "kettle",
    "chair",
    "table",
    "bed",
    "mattress",
    "pillow",
    "blanket",
    "toaster",
    "vacuum",
    "vacuum cleaner",
    "curtain",
    "rug",
    "carpet",
    "cookware",
    "frying pan",
    "saucepan",
    "blender",
    "microwave",
    "cupboard",
    "wardrobe",
    "shelf",
  ],
};

const EXPLICIT_RES: readonly RegExp[] = [
  /\bcategory\s*(?::|=|\bis\b)\s*["'“]?([a-z][a-z0-9_-]*)/i,
  /\bcategory\s+["'“]([a-z][a-z0-9_-]*)["'”]/i,
  /(?<![\w-])([a-z][a-z0-9]*_category)(?![\w-])/i,
];

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const KEYWORD_RES: ReadonlyArray<{ category: string; word: string; re: RegExp }> = Object.entries(
  CATEGORY_KEYWORDS,
).flatMap(([category, words]) =>
  words.map((w) => ({ category, word: w, re: new RegExp(`(?<![\\w-])${escapeRe(w)}(?:s|es)?(?![\\w-])`, "giu") })),
);

/** A product word in a text: the word as written, its keyword's category, and where it stands. */
export type ProductWord = {
  readonly word: string;
  readonly category: string;
  readonly index: number;
  readonly length: number;
};

/** Every product keyword of the category table in `text` (plural forms too), in order of appearance. */
export function findProductWords(text: string): ProductWord[] {
  const hits: ProductWord[] = [];
  for (const { category, re } of KEYWORD_RES)
    for (const m of text.matchAll(re)) hits.push({ word: m[0], category, index: m.index ?? 0, length: m[0].length });
  // A longer keyword wins over one inside it ("t-shirt" over "shirt", "vacuum cleaner" over "vacuum").
  hits.sort((a, b) => a.index - b.index || b.length - a.length);
  return hits.filter(
    (h, i) => !hits.slice(0, i).some((o) => h.index < o.index + o.length && o.index < h.index + h.length),
  );
}

/** The category of a product word ("shirts" → clothing), or undefined when the table does not know it. */
export function categoryOfWord(word: string): string | undefined {
  const hit = findProductWords(word.trim());
  return hit.length === 1 && hit[0]!.length === word.trim().length ? hit[0]!.category : undefined;
}

/** The category a text names: explicit `category: X` first, else the first product keyword; null when none. */
export function findCategory(text: string): { category: string | null; warnings: string[] } {
  for (const re of EXPLICIT_RES) {
    const explicit = re.exec(text);
    if (explicit?.[1] !== undefined) return { category: explicit[1].toLowerCase(), warnings: [] };
  }
  const hits: Array<{ category: string; index: number }> = [];
  for (const { category, re } of KEYWORD_RES) {
    for (const m of text.matchAll(re)) hits.push({ category, index: m.index ?? 0 });
  }
  hits.sort((a, b) => a.index - b.index);
  const first = hits[0];
  if (first === undefined) return { category: null, warnings: ["no product category recognised in the text"] };
  const distinct = [...new Set(hits.map((h) => h.category))];
  const warnings =
    distinct.length > 1 ? [`several categories mentioned (${distinct.join(", ")}); using ${first.category}`] : [];
  return { category: first.category, warnings };
}
