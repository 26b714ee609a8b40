// Money in customer text: `299.99 EUR`, `EUR 1,200.00`, `€45`, `45€`, `1.200,00 EUR`, `1200 euros`,
// English words (`forty-five euros`, `one hundred and twenty EUR`), and the choice of which amount is
// the claim — or the honest answer that the text does not say clearly (then a person reads it). Other currencies
// (`$45`, `¥12,800`, `USD 20`) are read in their own: the kernel holds the claim to the order's (no FX).
import { minorUnitsOf } from "../integrity/currency.ts";

const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const CUR = String.raw`€|\bEUR\b|\beuros?\b|US\$|\$|\bUSD\b|£|\bGBP\b|\bCHF\b|\bdollars?\b|\bpounds?\b|¥|\bJPY\b|\byen\b|\bKWD\b|\bBHD\b`;
const SP = String.raw`[ \u00a0\u202f]?`;
const CUR_NUM_RE = new RegExp(String.raw`(${CUR})${SP}(?<![\w.,])(${NUM})(?![\d]|[.,]\d)`, "gi");
const NUM_CUR_RE = new RegExp(String.raw`(?<![\w.,])(${NUM})(?![\d]|[.,]\d)${SP}(${CUR})`, "gi");
const BARE_RE = new RegExp(
  String.raw`\b(?:for|paid|cost|costs|price|priced at|worth|total of|refund of)\s+(?<![\w.,])(${NUM})(?![\d]|[.,]\d)(?!\s*(?:days?|weeks?|months?|years?|hours?|items?|pcs|pieces|x\b|%))`,
  "gi",
);

const PURCHASE_CUE =
  /\b(?:for|paid|pay|cost|costs|costing|price|priced|priced at|worth|total|totalling|spent|bought(?: it)? for)\s*(?:only|just|about|around|me)?\s*$/i;
const REFUND_CUE =
  /\b(?:refund|refunded|reimburse|reimbursed|reimbursement|back|return|compensation|credit)\s*(?:me|of|for|the)?\s*(?:only|just)?\s*$/i;

/** An amount found in text, with its ISO currency and the words just before it. */
interface FoundAmount {
  readonly value: number;
  readonly currency: string;
  readonly index: number;
  readonly length: number;
  readonly raw: string;
  readonly cue: "purchase" | "refund" | "none";
}

/** Parses a number as written with `,`/`.`/space grouping (`1,200.00`, `1.200,00`, `45,50`) into a number. */
export function parseAmountNumber(raw: string): number | undefined {
  const s = raw.replace(/[ \u00a0\u202f]/g, "");
  let normalised: string;
  const lastDot = s.lastIndexOf(".");
  const lastComma = s.lastIndexOf(",");
  if (lastDot !== -1 && lastComma !== -1) {
    const decimal = lastDot > lastComma ? "." : ",";
    const group = decimal === "." ? "," : ".";
    normalised = s.split(group).join("").replace(decimal, ".");
  } else if (lastComma !== -1) {
    normalised = /^\d{1,3}(,\d{3})+$/.test(s) ? s.replace(/,/g, "") : s.replace(",", ".");
  } else if (lastDot !== -1) {
    // `1.200` and `1.200.000` are EU thousands grouping; a decimal part has at most two digits.
    normalised = /^\d{1,3}(\.\d{3})+$/.test(s) ? s.replace(/\./g, "") : s;
  } else {
    normalised = s;
  }
  if (!/^\d+(\.\d+)?$/.test(normalised)) return undefined;
  const n = Number(normalised);
  return Number.isFinite(n) ? n : undefined;
}

function currencyCode(token: string): string {
  const t = token.toLowerCase();
  if (t === "€" || t === "eur" || t.startsWith("euro")) return "EUR";
  if (t === "$" || t === "us$" || t === "usd" || t.startsWith("dollar")) return "USD";
  if (t === "£" || t === "gbp" || t.startsWith("pound")) return "GBP";
  if (t === "¥" || t === "jpy" || t === "yen") return "JPY";
  return t.toUpperCase();
}

function cueBefore(text: string, index: number): FoundAmount["cue"] {
  const before = text.slice(Math.max(0, index - 40), index);
  if (PURCHASE_CUE.test(before)) return "purchase";
  if (REFUND_CUE.test(before)) return "refund";
  return "none";
}

/** Amounts written with a currency, in order of appearance (overlapping readings dropped). */
export function findAmounts(text: string): FoundAmount[] {
  const found: FoundAmount[] = [];
  for (const m of text.matchAll(CUR_NUM_RE)) {
    const value = parseAmountNumber(m[2] ?? "");
    if (value === undefined) continue;
    const index = m.index ?? 0;
    found.push({
      value,
      currency: currencyCode(m[1] ?? ""),
      index,
      length: m[0].length,
      raw: m[0],
      cue: cueBefore(text, index),
    });
  }
  for (const m of text.matchAll(NUM_CUR_RE)) {
    const value = parseAmountNumber(m[1] ?? "");
    if (value === undefined) continue;
    const index = m.index ?? 0;
    found.push({
      value,
      currency: currencyCode(m[2] ?? ""),
      index,
      length: m[0].length,
      raw: m[0],
      cue: cueBefore(text, index),
    });
  }
  found.sort((a, b) => a.index - b.index || b.length - a.length);
  const kept: FoundAmount[] = [];
  for (const f of found) {
    const last = kept[kept.length - 1];
    if (last !== undefined && f.index < last.index + last.length) continue;
    kept.push(f);
  }
  return kept;
}

const UNIT_WORDS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS_WORDS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fourty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const NUMBER_VOCABULARY = new Set([
  ...Object.keys(UNIT_WORDS),
  ...Object.keys(TENS_WORDS),
  "hundred",
  "thousand",
  "and",
  "a",
]);
/** Words that say "an amount, but not exactly": an amount written with them cannot be read. */
const VAGUE_QUANTITY =
  /^(?:few|several|some|couple|hundreds|thousands|dozen|dozens|many|lots?|half|something|odd|ish|umpteen|various|multiple)$|-(?:something|ish|odd)$/;
const EUR_WORD_RE = /(?<![\p{L}\p{N}])(euros?|eur)(?![\p{L}\p{N}])/giu;

/** Reads an English number written in words (`forty-five`, `one hundred and twenty`, `twelve hundred`, `a thousand`); undefined when it is not one. */
export function parseNumberWords(phrase: string): number | undefined {
  const tokens = phrase
    .toLowerCase()
    .split(/[\s-]+/)
    .filter((t) => t !== "");
  let total = 0;
  let current = 0;
  let last: "start" | "a" | "and" | "unit" | "teen" | "tens" | "hundred" | "thousand" = "start";
  for (const t of tokens) {
    const unit = UNIT_WORDS[t];
    const tens = TENS_WORDS[t];
    if (t === "and") {
      if (last !== "hundred" && last !== "thousand") return undefined;
      last = "and";
    } else if (t === "a") {
      if (last !== "start") return undefined;
      last = "a";
    } else if (unit !== undefined) {
      if (last === "unit" || last === "teen" || last === "a" || (last === "tens" && (unit >= 10 || unit === 0)))
        return undefined;
      current += unit;
      last = unit < 10 ? "unit" : "teen";
    } else if (tens !== undefined) {
      if (last === "unit" || last === "teen" || last === "tens" || last === "a") return undefined;
      current += tens;
      last = "tens";
    } else if (t === "hundred") {
      if (last === "start" || last === "a") current = 100;
      else if ((last === "unit" || last === "teen" || last === "tens") && current < 100) current *= 100;
      else return undefined;
      last = "hundred";
    } else if (t === "thousand") {
      if (total > 0) return undefined;
      if (last === "start" || last === "a") total = 1000;
      else if (last === "unit" || last === "teen" || last === "tens" || last === "hundred") total = current * 1000;
      else return undefined;
      current = 0;
      last = "thousand";
    } else {
      return undefined;
    }
  }
  if (last === "start" || last === "a" || last === "and") return undefined;
  return total + current;
}

/** Amounts written in words before a euro word, and the ones that cannot be read (`a few hundred euros`, `forty-something euros`). */
export function findWordAmounts(text: string): {
  amounts: FoundAmount[];
  unreadable: Array<{ raw: string; index: number }>;
} {
  const amounts: FoundAmount[] = [];
  const unreadable: Array<{ raw: string; index: number }> = [];
  for (const m of text.matchAll(EUR_WORD_RE)) {
    const at = m.index ?? 0;
    const before = text.slice(Math.max(0, at - 80), at);
    if (/[\d.,]\s*$/.test(before)) continue; // `45 euros`: a number in digits, read by findAmounts
    const offset = at - before.length;
    const trailing = before.match(/(?:[\p{L}]+(?:-[\p{L}]+)*[ \t]+)+$/u);
    if (trailing === null) continue;
    const base = offset + (trailing.index ?? 0);
    const tokens = [...trailing[0].matchAll(/[\p{L}]+(?:-[\p{L}]+)*/gu)].map((t) => ({
      word: t[0],
      index: base + (t.index ?? 0),
    }));
    // The longest run of number words right before the currency ("and" may not lead it: "bread and twenty euros").
    let first = tokens.length;
    while (
      first > 0 &&
      tokens[first - 1]!.word.toLowerCase()
        .split("-")
        .every((p) => NUMBER_VOCABULARY.has(p))
    )
      first--;
    while (first < tokens.length && tokens[first]!.word.toLowerCase() === "and") first++;
    const run = tokens.slice(first);
    // "a few hundred euros", "a couple of thousand euros": a vague word in front makes the number unreadable.
    const lead = tokens[first - 1]?.word.toLowerCase() === "of" ? tokens[first - 2] : tokens[first - 1];
    const vagueLead = run.length > 0 && lead !== undefined && VAGUE_QUANTITY.test(lead.word.toLowerCase());
    const value = run.length === 0 || vagueLead ? undefined : parseNumberWords(run.map((t) => t.word).join(" "));
    if (value !== undefined) {
      const start = run[0]!.index;
      const after = text.slice(at + m[0].length);
      const cents = after.match(/^[ \t]+and[ \t]+(\d{1,2}|(?:[\p{L}]+(?:-[\p{L}]+)*[ \t]+)+?)[ \t]*cents?(?![\p{L}])/u);
      const centValue =
        cents === null ? undefined : /^\d/.test(cents[1]!) ? Number(cents[1]) : parseNumberWords(cents[1]!);
      const withCents = cents !== null && centValue !== undefined && centValue < 100;
      const end = at + m[0].length + (withCents ? cents[0].length : 0);
      amounts.push({
        value: withCents ? Math.round(value * 100 + centValue) / 100 : value,
        currency: "EUR",
        index: start,
        length: end - start,
        raw: text.slice(start, end),
        cue: cueBefore(text, start),
      });
      continue;
    }
    const last = tokens.at(-1)?.word.toLowerCase() === "of" ? tokens.at(-2) : tokens.at(-1);
    const lastWord = last?.word.toLowerCase() ?? "";
    const vague =
      last !== undefined &&
      (VAGUE_QUANTITY.test(lastWord) ||
        lastWord.split("-").some((p) => NUMBER_VOCABULARY.has(p) && p !== "a" && p !== "and"));
    if (vague) {
      const quantityLike = (w: string) =>
        w === "of" || VAGUE_QUANTITY.test(w) || w.split("-").some((p) => NUMBER_VOCABULARY.has(p));
      let i = tokens.length - 1;
      while (i > 0 && quantityLike(tokens[i - 1]!.word.toLowerCase())) i--;
      const from = tokens[i]!.index;
      unreadable.push({ raw: text.slice(from, at + m[0].length), index: from });
    }
  }
  return { amounts, unreadable };
}

/** Numbers without a currency right after a price word (`for 1200`, `paid 45`), used only when no amount has a currency. */
function findBareAmounts(text: string): FoundAmount[] {
  const out: FoundAmount[] = [];
  for (const m of text.matchAll(BARE_RE)) {
    const value = parseAmountNumber(m[1] ?? "");
    if (value === undefined) continue;
    out.push({ value, currency: "EUR", index: m.index ?? 0, length: m[0].length, raw: m[0], cue: "purchase" });
  }
  return out;
}

/** The amount chosen as the claim, with notes explaining the choice when the text was not clear-cut. */
export type ChosenAmount =
  | { ok: true; value: number; currency: string; warnings: string[] }
  | {
      ok: false;
      code: "NO_AMOUNT" | "UNSUPPORTED_CURRENCY" | "AMBIGUOUS_AMOUNT";
      message: string;
      currency: string | null;
    };

/**
 * Picks the claimed amount, in the text's currency (EUR when it has euro amounts, else the one currency its amounts
 * are in, `$` read as USD and `¥` as JPY): the only amount (digits or English words); else the smaller of the
 * price paid and the refund asked for; else the one marked as paid or asked for. It never picks a
 * larger amount when a smaller one is the price, and it never guesses: several amounts nothing tells
 * apart, or an amount written in words it cannot read beside others, is `AMBIGUOUS_AMOUNT` (review).
 */
export function chooseClaimAmount(text: string): ChosenAmount {
  const words = findWordAmounts(text);
  const all = [...findAmounts(text), ...words.amounts].sort((a, b) => a.index - b.index);
  const eur = all.filter((a) => a.currency === "EUR");
  const vague = words.unreadable.map((u) => `'${u.raw}'`).join(", ");
  if (words.unreadable.length > 0) {
    return eur.length === 0
      ? {
          ok: false,
          code: "NO_AMOUNT",
          message: `the amount ${vague} is written in words the extractor cannot read as a number`,
          currency: null,
        }
      : {
          ok: false,
          code: "AMBIGUOUS_AMOUNT",
          message: `the text states ${eur.map((a) => `${a.value} EUR`).join(", ")} and also ${vague}, which the extractor cannot read; a person must tell which is claimed`,
          currency: "EUR",
        };
  }
  // The claim's currency: EUR's amounts when the text has any (others are ignored, as before currencies), else the
  // one currency the text's amounts are in; amounts in several currencies, or in a three-decimal currency (KWD 1.250
  // reads like a thousands group), are for a person to read.
  const foreignCodes = [...new Set(all.filter((a) => a.currency !== "EUR").map((a) => a.currency))];
  const claimed = eur.length > 0 ? "EUR" : foreignCodes.length === 1 ? foreignCodes[0]! : undefined;
  if (eur.length === 0 && foreignCodes.length > 1)
    return {
      ok: false,
      code: "AMBIGUOUS_AMOUNT",
      message: `amounts in several currencies (${all.map((a) => a.raw.trim()).join(", ")}); a person must tell which is claimed`,
      currency: null,
    };
  if (claimed !== undefined && (minorUnitsOf(claimed) ?? 2) > 2) {
    const first = all.find((a) => a.currency === claimed)!;
    return {
      ok: false,
      code: "UNSUPPORTED_CURRENCY",
      message: `the amount '${first.raw.trim()}' is in ${claimed}, whose three decimals free text cannot state unambiguously; a person reads it`,
      currency: claimed,
    };
  }
  if (claimed === undefined) {
    const bare = findBareAmounts(text);
    const distinctBare = [...new Set(bare.map((b) => b.value))];
    if (distinctBare.length === 1 && distinctBare[0] !== undefined) {
      return {
        ok: true,
        value: distinctBare[0],
        currency: "EUR",
        warnings: [`amount ${distinctBare[0]} has no currency; assumed EUR`],
      };
    }
    if (distinctBare.length > 1) {
      return {
        ok: false,
        code: "AMBIGUOUS_AMOUNT",
        message: `several amounts without a currency (${distinctBare.join(", ")}); cannot tell which is claimed`,
        currency: null,
      };
    }
    return {
      ok: false,
      code: "NO_AMOUNT",
      message: "no amount with a currency (e.g. 299.99 EUR, €45, forty-five euros) found in the text",
      currency: null,
    };
  }
  const warnings: string[] = [];
  const inClaimed = all.filter((a) => a.currency === claimed);
  const foreign = all.filter((a) => a.currency !== claimed);
  if (foreign.length > 0)
    warnings.push(`ignored amounts in other currencies: ${foreign.map((f) => f.raw.trim()).join(", ")}`);
  const distinct = [...new Set(inClaimed.map((a) => a.value))];
  if (distinct.length === 1 && distinct[0] !== undefined)
    return { ok: true, value: distinct[0], currency: claimed, warnings };
  const list = distinct.map((v) => `${v} ${claimed}`).join(", ");
  const paid = [...new Set(inClaimed.filter((a) => a.cue === "purchase").map((a) => a.value))];
  const asked = [...new Set(inClaimed.filter((a) => a.cue === "refund").map((a) => a.value))];
  const ambiguous = (why: string): ChosenAmount => ({
    ok: false,
    code: "AMBIGUOUS_AMOUNT",
    message: `several amounts in the text (${list}) ${why}; a person must tell which is claimed`,
    currency: claimed,
  });
  if (paid.length > 1)
    return ambiguous(`and more than one is named as the price (${paid.map((v) => `${v} ${claimed}`).join(", ")})`);
  if (asked.length > 1)
    return ambiguous(`and more than one is asked for (${asked.map((v) => `${v} ${claimed}`).join(", ")})`);
  const paidValue = paid[0];
  const askedValue = asked[0];
  let value: number;
  if (paidValue !== undefined && askedValue !== undefined) {
    value = Math.min(paidValue, askedValue);
    if (askedValue > paidValue)
      warnings.push(
        `the text asks for ${askedValue} ${claimed}, more than the ${paidValue} ${claimed} paid; using ${paidValue} ${claimed}`,
      );
  } else if (paidValue !== undefined) value = paidValue;
  else if (askedValue !== undefined) value = askedValue;
  else return ambiguous("and nothing says which is the price or the refund asked for");
  warnings.push(`several amounts in the text (${list}); using ${value} ${claimed}`);
  return { ok: true, value, currency: claimed, warnings };
}
