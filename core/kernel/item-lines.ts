// The items a free-text claim names, matched to the order's lines (docs/kernel.md "Orders with lines"). Extraction
// runs before anything reads the order, so it names items ("both shirts", "the TV"); the kernel, which has the order,
// matches them here — deterministically, from the recorded claim and order, so replay and backtest match the same.
// An item matches a line by its name (every word of it in the line's `title` or `sku`: "shirt" ↔ "T-Shirt, medium",
// "tv" ↔ "TV-55"), else by its category ("shirts" → clothing ↔ the one clothing line). An item only its category
// matches is part of a line another item named by name when that line has its category ("the TV's screen").
import type { ClaimItem } from "../claim/claim.ts";
import { categoryOfWord } from "../extraction/category.ts";
import type { OrderLineView, OrderView } from "./order-view.ts";

/** The claim's lines read from its items, or the candidate lines when only a person can tell (LINE_AMBIGUOUS). */
export type ItemLines =
  | { readonly ok: true; readonly lines: readonly { line_id: string; quantity?: number }[] }
  | { readonly ok: false; readonly candidates: readonly OrderLineView[] };

/** The words of a name, lower-cased and singular ("T-Shirts" → t, shirt). */
function words(name: string): string[] {
  return (name.toLowerCase().match(/[\p{L}\d]+/gu) ?? []).map(singular);
}

function singular(word: string): string {
  if (word.length > 4 && /(?:ches|shes|sses|xes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The lines whose title or sku holds every word of the item's name. */
function byName(view: OrderView, item: ClaimItem): OrderLineView[] {
  const wanted = words(item.name);
  if (wanted.length === 0) return [];
  return view.lines.filter((line) => {
    const own = new Set(words(`${line.title ?? ""} ${line.sku ?? ""}`));
    return wanted.every((w) => own.has(w));
  });
}

/** The lines of the item's category (the extraction's product words: "shirts" → clothing). */
function byCategory(view: OrderView, item: ClaimItem): OrderLineView[] {
  const category = categoryOfWord(item.name) ?? categoryOfWord(words(item.name).at(-1) ?? "");
  return category === undefined ? [] : view.lines.filter((l) => l.category === category);
}

/**
 * Matches `items` to the lines of `view`: every item to one line (several items may name one line; a line's units are
 * the largest count its items give, all its units when none counts) → the claim's lines. An item that matches no line
 * or several, or counts more units than the line has, leaves the lines to a person: the candidates are the lines
 * its items could mean (every line when an item matches none).
 */
export function itemLines(view: OrderView, items: readonly ClaimItem[]): ItemLines {
  const named = items.map((item) => ({ item, lines: byName(view, item) }));
  const namedLines = new Set(named.flatMap((n) => (n.lines.length === 1 ? [n.lines[0]!.line_id] : [])));
  const chosen = new Map<string, number | undefined>();
  const candidates = new Set<OrderLineView>();
  let known = true;
  for (const { item, lines } of named) {
    let match = lines;
    if (match.length === 0) {
      const ofCategory = byCategory(view, item);
      // A part of a line another item named ("the TV's screen"): no line of its own.
      if (ofCategory.some((l) => namedLines.has(l.line_id))) continue;
      match = ofCategory;
    }
    if (match.length !== 1) {
      known = false;
      for (const line of match.length === 0 ? view.lines : match) candidates.add(line);
      continue;
    }
    const line = match[0]!;
    candidates.add(line);
    if (item.quantity !== undefined && item.quantity > line.quantity) known = false;
    const before = chosen.get(line.line_id);
    const units = item.quantity === undefined ? before : Math.max(before ?? 0, item.quantity);
    chosen.set(line.line_id, units);
  }
  if (!known || chosen.size === 0) return { ok: false, candidates: view.lines.filter((l) => candidates.has(l)) };
  return {
    ok: true,
    lines: [...chosen].map(([line_id, quantity]) => (quantity === undefined ? { line_id } : { line_id, quantity })),
  };
}
