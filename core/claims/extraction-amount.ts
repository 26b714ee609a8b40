// Money in customer text: `299.99 EUR`, `EUR 1,200.00`, `€45`, `45€`, `1.200,00 EUR`, `1200 euros`,
// and the choice of which amount is the claim.

const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const CUR = String.raw`€|\bEUR\b|\beuros?\b|US\$|\$|\bUSD\b|£|\bGBP\b|\bCHF\b|\bdollars?\b|\bpounds?\b`;
const SP = String.raw`[ \u00a0\u202f]?`;
const CUR_NUM_RE = new RegExp(String.raw`(${CUR})${SP}(?<![\w.,])(${NUM})(?![\d]|[.,]\d)`, "gi");
const NUM_CUR_RE = new RegExp(String.raw`(?<![\w.,])(${NUM})(?![\d]|[.,]\d)${SP}(${CUR})`, "gi");
const BARE_RE = new RegExp(
  String.raw`\b(?:for|paid|cost|costs|price|priced at|worth|total of|refund of)\s+(?<![\w.,])(${NUM})(?![\d]|[.,]\d)(?!\s*(?:days?|weeks?|months?|years?|hours?|items?|pcs|pieces|x\b|%))`,
  "gi",
);

const PURCHASE_CUE = /\b(?:for|paid|pay|cost|costs|costing|price|priced|priced at|worth|total|totalling|spent|bought(?: it)? for)\s*(?:only|just|about|around|me)?\s*$/i;
const REFUND_CUE = /\b(?:refund|refunded|reimburse|reimbursed|reimbursement|back|return|compensation|credit)\s*(?:me|of|for|the)?\s*(?:only|just)?\s*$/i;

/** An amount found in text, with its ISO currency and the words just before it. */
export interface FoundAmount {
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
    found.push({ value, currency: currencyCode(m[1] ?? ""), index, length: m[0].length, raw: m[0], cue: cueBefore(text, index) });
  }
  for (const m of text.matchAll(NUM_CUR_RE)) {
    const value = parseAmountNumber(m[1] ?? "");
    if (value === undefined) continue;
    const index = m.index ?? 0;
    found.push({ value, currency: currencyCode(m[2] ?? ""), index, length: m[0].length, raw: m[0], cue: cueBefore(text, index) });
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

/** Numbers without a currency right after a price word (`for 1200`, `paid 45`), used only when no amount has a currency. */
export function findBareAmounts(text: string): FoundAmount[] {
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
  | { ok: true; value: number; currency: "EUR"; warnings: string[] }
  | { ok: false; code: "NO_AMOUNT" | "UNSUPPORTED_CURRENCY"; message: string; currency: string | null };

/**
 * Picks the claimed amount: the only euro amount; else the smaller of the price paid and the refund
 * asked for; else the smallest euro amount. It never picks a larger amount when a smaller one is the price.
 */
export function chooseClaimAmount(text: string): ChosenAmount {
  const all = findAmounts(text);
  const eur = all.filter((a) => a.currency === "EUR");
  if (eur.length === 0) {
    const foreign = all[0];
    if (foreign !== undefined) {
      return {
        ok: false,
        code: "UNSUPPORTED_CURRENCY",
        message: `the amount '${foreign.raw.trim()}' is in ${foreign.currency}; claims are handled in EUR`,
        currency: foreign.currency,
      };
    }
    const bare = findBareAmounts(text);
    const distinctBare = [...new Set(bare.map((b) => b.value))];
    if (distinctBare.length === 1 && distinctBare[0] !== undefined) {
      return { ok: true, value: distinctBare[0], currency: "EUR", warnings: [`amount ${distinctBare[0]} has no currency; assumed EUR`] };
    }
    if (distinctBare.length > 1) {
      return { ok: false, code: "NO_AMOUNT", message: `several amounts without a currency (${distinctBare.join(", ")}); cannot tell which is claimed`, currency: null };
    }
    return { ok: false, code: "NO_AMOUNT", message: "no amount with a currency (e.g. 299.99 EUR, €45) found in the text", currency: null };
  }
  const warnings: string[] = [];
  const foreign = all.filter((a) => a.currency !== "EUR");
  if (foreign.length > 0) warnings.push(`ignored amounts in other currencies: ${foreign.map((f) => f.raw.trim()).join(", ")}`);
  const distinct = [...new Set(eur.map((a) => a.value))];
  if (distinct.length === 1 && distinct[0] !== undefined) return { ok: true, value: distinct[0], currency: "EUR", warnings };
  const paid = eur.find((a) => a.cue === "purchase");
  const asked = eur.find((a) => a.cue === "refund");
  const list = distinct.map((v) => `${v} EUR`).join(", ");
  let value: number;
  if (paid !== undefined && asked !== undefined) {
    value = Math.min(paid.value, asked.value);
    if (asked.value > paid.value) warnings.push(`the text asks for ${asked.value} EUR, more than the ${paid.value} EUR paid; using ${paid.value} EUR`);
  } else if (paid !== undefined) value = paid.value;
  else if (asked !== undefined) value = asked.value;
  else value = Math.min(...distinct);
  warnings.push(`several amounts in the text (${list}); using ${value} EUR`);
  return { ok: true, value, currency: "EUR", warnings };
}
