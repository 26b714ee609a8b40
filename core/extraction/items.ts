// The items a free-text claim names and the units it counts (docs/llm.md#items-and-lines): "both shirts" → shirts ×2,
// "one of the two shirts" → shirts ×1, "the TV and one shirt" → TV, shirt ×1. Extraction runs before anything reads
// the order, so it names items, never lines: the kernel matches them to the order's lines (core/kernel/item-lines.ts).
import type { ExtractedItem } from "../claim/proposal-output.ts";
import { findProductWords } from "./category.ts";

/** Count words in English, German, French and Spanish, by the number they say. */
const COUNT_WORDS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  both: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  // German
  ein: 1,
  eine: 1,
  einen: 1,
  einem: 1,
  eines: 1,
  zwei: 2,
  beide: 2,
  beiden: 2,
  drei: 3,
  vier: 4,
  fünf: 5,
  // French
  un: 1,
  une: 1,
  deux: 2,
  trois: 3,
  quatre: 4,
  cinq: 5,
  // Spanish
  uno: 1,
  una: 1,
  dos: 2,
  ambos: 2,
  ambas: 2,
  tres: 3,
  cuatro: 4,
  cinco: 5,
};

/** Words that may stand between a count and its item ("both of the shirts", "one of my two shirts", "les deux chemises"). */
const FILLERS = new Set([
  "of",
  "von",
  "del",
  "the",
  "my",
  "these",
  "those",
  "der",
  "die",
  "den",
  "meiner",
  "meine",
  "les",
  "des",
  "de",
  "mes",
  "los",
  "las",
  "mis",
  "all",
  "alle",
  "todos",
  "todas",
  "tous",
  "toutes",
  "new",
  "black",
  "white",
  "blue",
  "red",
  "green",
]);

/** The words before `index` in `text`, nearest last, at most `n` of them (letters and digits only). */
function wordsBefore(text: string, index: number, n: number): string[] {
  const before = text.slice(Math.max(0, index - 60), index).toLowerCase();
  return (before.match(/[\p{L}\d]+/gu) ?? []).slice(-n);
}

/** The number a count word says. */
function countOf(word: string): number | undefined {
  return Object.hasOwn(COUNT_WORDS, word) ? COUNT_WORDS[word] : undefined;
}

/**
 * The units the words before an item count, or undefined when they count none. Only fillers may stand between a
 * count and its item ("I paid 40 for the shirts" counts nothing); of two counts, the first is what is claimed and
 * the second what was bought ("one of the two shirts", "eines der zwei Hemden", "une des deux chemises" → 1). Digits
 * count only right before the item ("2 shirts"), never from an id or a placeholder ("PHONE_1 my shirt").
 */
function countBefore(text: string, index: number): number | undefined {
  const words = wordsBefore(text, index, 8);
  const adjacentDigits = /(?:^|[\s(])\d{1,3}[ \t]+$/.test(text.slice(0, index));
  const counts: number[] = [];
  let article = false;
  for (let i = words.length - 1; i >= 0; i--) {
    const word = words[i]!;
    const digits = /^\d+$/.test(word);
    if (digits && !(adjacentDigits && i === words.length - 1)) break;
    const said = digits ? Number(word) : countOf(word);
    if (said !== undefined) {
      counts.unshift(said);
      article = ARTICLES.has(word);
    } else if (!FILLERS.has(word)) break;
  }
  // "ein Hemd", "une chemise" count no more than "a shirt" does: an article counts only as "one of" several.
  if (counts.length === 0 || (counts.length === 1 && article)) return undefined;
  return counts[0]! > 0 ? counts[0] : undefined;
}

/** The count words that are also the indefinite article ("a"). */
const ARTICLES = new Set(["ein", "eine", "einen", "einem", "un", "une", "una"]);

/**
 * The items `text` names (product words of the category table, as written, lower-cased), each once in order of
 * appearance, with the units the text counts before it; null when it names none.
 */
export function findItems(text: string): ExtractedItem[] | null {
  const items = new Map<string, ExtractedItem>();
  for (const word of findProductWords(text)) {
    const name = word.word.toLowerCase();
    const quantity = countBefore(text, word.index) ?? null;
    const seen = items.get(name);
    if (seen === undefined) items.set(name, { name, quantity });
    else if (seen.quantity === null && quantity !== null) items.set(name, { name, quantity });
  }
  return items.size === 0 ? null : [...items.values()];
}
