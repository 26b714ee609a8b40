// The deterministic pattern extractor (free text → ClaimExtractionOutput) used by the rules model,
// and the step every extraction — pattern or LLM — goes through to become a Claim.
import { IntakeClaimSchema, type Claim } from "../claim/claim.ts";
import type { ClaimExtractionAnswer, ClaimExtractionOutput } from "../claim/proposal-output.ts";
import { chooseClaimAmount, findAmounts, findWordAmounts, type ChosenAmount } from "./amount.ts";
import { findCategory } from "./category.ts";
import { findDates, normalizeDate } from "./date.ts";
import { findItems } from "./items.ts";
import { containsInstructionLikeText, INSTRUCTION_NOTE } from "./signals.ts";
import { isModelUnavailable } from "../llm/errors.ts";
import { isCurrencyCode } from "../integrity/currency.ts";

export {
  findAmounts,
  findWordAmounts,
  parseAmountNumber,
  parseNumberWords,
  chooseClaimAmount,
  type ChosenAmount,
} from "./amount.ts";
export { findCategory } from "./category.ts";
export { findDates, normalizeDate } from "./date.ts";
export { findItems } from "./items.ts";
export { containsInstructionLikeText, INSTRUCTION_NOTE } from "./signals.ts";

/** Why the pattern extractor could not produce a usable claim. */
export type TextExtractionFailureCode =
  | "EMPTY_TEXT"
  | "NO_ORDER_ID"
  | "AMBIGUOUS_ORDER_ID"
  | "NO_AMOUNT"
  | "AMBIGUOUS_AMOUNT"
  | "UNSUPPORTED_CURRENCY";

/** The pattern extractor's result; a failure still carries what it did find (`partial`, nulls elsewhere). */
type TextExtraction =
  | { ok: true; claim: ClaimExtractionOutput; warnings: string[] }
  | { ok: false; code: TextExtractionFailureCode; message: string; partial: ClaimExtractionOutput; warnings: string[] };

const ORDER_ID_RE = /(?<![\w-])ord_[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?(?![\w-])/gi;

/** Normalises an order id's prefix (`ORD_001` → `ord_001`); the rest is kept as written. */
function normalizeOrderId(id: string): string {
  const t = id.trim();
  return /^ord_/i.test(t) ? `ord_${t.slice(4)}` : t;
}

/** Order ids (`ord_…`, any case) in text, normalised and de-duplicated, in order of appearance. */
export function findOrderIds(text: string): string[] {
  const seen = new Map<string, string>();
  for (const m of text.matchAll(ORDER_ID_RE)) {
    const id = normalizeOrderId(m[0]);
    if (!seen.has(id.toLowerCase())) seen.set(id.toLowerCase(), id);
  }
  return [...seen.values()];
}

function mask(text: string, spans: ReadonlyArray<{ index: number; length: number }>): string {
  let out = text;
  for (const s of spans) out = out.slice(0, s.index) + " ".repeat(s.length) + out.slice(s.index + s.length);
  return out;
}

const PROBLEM_RE =
  /\b(?:dead|broken|broke|breaks|not work(?:ing)?|doesn'?t work|does not work|stopped|won'?t|will not|does not|doesn'?t|did not|didn'?t|cannot|can'?t|defect(?:ive)?|faulty|fault|damaged?|crack(?:ed)?|scratch(?:ed)?|missing|wrong|never arrived|not arrived|arrived late|late|too small|too big|too large|does not fit|doesn'?t fit|leak(?:s|ing)?|overheat(?:s|ing)?|no sound|no power|flicker(?:s|ing)?|torn|tear|hole|stain(?:ed)?|smells?|noise|noisy|unhappy|disappointed|not as described|return)\b/i;

/** A short neutral summary of what the customer reports, without instructions or the purchase details. */
export function summarizeReason(text: string): string {
  const clauses = text
    .split(/[.;!?\n]+|,\s+|\s[-–—]\s|\s+(?:but|because|since|and then)\s+/i)
    .map((c) => c.replace(/\s+/g, " ").trim())
    .filter((c) => c.length > 0 && !containsInstructionLikeText(c));
  const problems = clauses.filter((c) => PROBLEM_RE.test(c)).slice(0, 2);
  const base =
    problems.length === 0
      ? "Customer requests a refund; no reason stated."
      : `Customer reports: ${problems.map((c) => c.replace(/^(?:and|but|so|as|because|since)\s+/i, "")).join("; ")}.`;
  const capped = base.length > 200 ? `${base.slice(0, 197).trimEnd()}...` : base;
  return containsInstructionLikeText(text) ? `${capped} ${INSTRUCTION_NOTE}` : capped;
}

/** The text with order ids and dates blanked out, so neither is read as an amount. */
function withoutIdsAndDates(
  text: string,
  now?: string | number,
): { masked: string; dates: ReturnType<typeof findDates>["dates"]; dateWarnings: string[] } {
  const orderMatches = [...text.matchAll(ORDER_ID_RE)].map((m) => ({ index: m.index ?? 0, length: m[0].length }));
  const afterIds = mask(text, orderMatches);
  const { dates, warnings } = findDates(afterIds, now);
  return { masked: mask(afterIds, dates), dates, dateWarnings: warnings };
}

/** The claimed amount as the text states it (digits or English words), or why the text does not say clearly. */
function readClaimAmount(text: string, now?: string | number): ChosenAmount {
  return chooseClaimAmount(withoutIdsAndDates(text, now).masked);
}

/**
 * Extracts a structured claim from free text with patterns only: order id, amount and its currency (EUR when the
 * text names none), purchase date, category (an item's name: "the shirts" → clothing) and a short reason. `now` (ISO or epoch ms) dates prose like `20 Feb` that has no year.
 */
export function extractClaimFromText(text: string, now?: string | number): TextExtraction {
  const warnings: string[] = [];
  const empty: ClaimExtractionOutput = {
    order_id: null,
    amount_eur: null,
    category: null,
    reason: "",
    purchase_date: null,
    currency: null,
    items: null,
  };
  if (text.trim() === "")
    return { ok: false, code: "EMPTY_TEXT", message: "the claim text is empty", partial: empty, warnings };

  const orderIds = findOrderIds(text);
  const { masked: afterDates, dates, dateWarnings } = withoutIdsAndDates(text, now);
  warnings.push(...dateWarnings);
  const amount = chooseClaimAmount(afterDates);
  const category = findCategory(afterDates);
  warnings.push(...category.warnings);
  if (amount.ok) warnings.push(...amount.warnings);
  const firstDate = dates[0];
  if (dates.length > 1 && firstDate !== undefined) {
    warnings.push(
      `several dates in the text (${dates.map((d) => d.iso).join(", ")}); using ${firstDate.iso} as the purchase date`,
    );
  }
  if (containsInstructionLikeText(text))
    warnings.push("the text contains instruction-like content; it was treated as data, not instructions");

  const onlyId = orderIds.length === 1 ? (orderIds[0] ?? null) : null;
  const partial: ClaimExtractionOutput = {
    order_id: onlyId,
    amount_eur: amount.ok ? amount.value : null,
    category: category.category,
    reason: summarizeReason(text),
    purchase_date: firstDate?.iso ?? null,
    currency: amount.currency,
    items: findItems(afterDates),
  };

  const problems: Array<{ code: TextExtractionFailureCode; message: string }> = [];
  if (orderIds.length === 0)
    problems.push({ code: "NO_ORDER_ID", message: "no order id of the form ord_… found in the text" });
  if (orderIds.length > 1)
    problems.push({
      code: "AMBIGUOUS_ORDER_ID",
      message: `several order ids in the text (${orderIds.join(", ")}); a claim is about one order`,
    });
  if (!amount.ok) problems.push({ code: amount.code, message: amount.message });
  const first = problems[0];
  if (first !== undefined) {
    return { ok: false, code: first.code, message: problems.map((p) => p.message).join("; "), partial, warnings };
  }
  return { ok: true, claim: partial, warnings };
}

/** The model name a claim read by patterns alone records (CLAIM_EXTRACTED `source: "patterns"`): no model call was made. */
export const PATTERN_EXTRACTOR = "patterns";

/**
 * The extraction of free text that needs no model (docs/llm.md, "Extraction by patterns"): the patterns read exactly
 * one order id and one EUR amount, the claim builds from them, and neither step warns of anything (no instruction-like
 * content, no second date, no unknown category, no amount to disambiguate). Anything less goes to the model.
 */
export function plainTextExtraction(text: string, now?: string | number): ClaimExtractionOutput | undefined {
  const read = extractClaimFromText(text, now);
  if (!read.ok || read.warnings.length > 0) return undefined;
  const claim = claimFromExtraction(read.claim, { text, ...(now === undefined ? {} : { now }) });
  return claim.ok && claim.warnings.length === 0 ? read.claim : undefined;
}

/** Why an extraction output (from the pattern extractor or an LLM) cannot become a Claim. */
export type ClaimFromExtractionFailureCode =
  | "NO_ORDER_ID"
  | "AMBIGUOUS_ORDER_ID"
  | "ORDER_ID_NOT_IN_TEXT"
  | "NO_AMOUNT"
  | "AMBIGUOUS_AMOUNT"
  | "AMOUNT_NOT_IN_TEXT"
  | "UNSUPPORTED_CURRENCY"
  | "INVALID_CLAIM";

/** A claim built from an extraction, or the reason it cannot be built. */
type ClaimFromExtraction =
  | { ok: true; claim: Claim; warnings: string[] }
  | { ok: false; code: ClaimFromExtractionFailureCode; message: string };

/**
 * Turns an extraction output into a validated Claim, trusting nothing: normalises the id, currency
 * and date, and — given the source `text` — holds the id and the amount to what the text says: the id
 * must be the text's only order id, and the amount the one the text states (read deterministically,
 * digits or English words). When the text itself is unclear (two order ids, several amounts nothing
 * tells apart, an amount in words that cannot be read) the claim goes to a person instead of a guess.
 * A missing category becomes `unspecified` (the kernel judges the order's category, not the claim's).
 */
export function claimFromExtraction(
  output: ClaimExtractionAnswer,
  opts: { text?: string; now?: string | number } = {},
): ClaimFromExtraction {
  const warnings: string[] = [];
  const orderId = output.order_id === null ? "" : normalizeOrderId(output.order_id);
  const text = opts.text;
  if (text !== undefined) {
    const ids = findOrderIds(text);
    if (ids.length > 1)
      return {
        ok: false,
        code: "AMBIGUOUS_ORDER_ID",
        message: `the text names several order ids (${ids.join(", ")}); a claim is about one order`,
      };
    if (orderId !== "") {
      const stated = ids.length === 1 ? ids[0]!.toLowerCase() === orderId.toLowerCase() : isStandaloneId(text, orderId);
      if (!stated)
        return {
          ok: false,
          code: "ORDER_ID_NOT_IN_TEXT",
          message: `extracted order id ${JSON.stringify(orderId)} is not ${ids.length === 1 ? `the text's order id ${ids[0]}` : "an order id the claim text contains"}`,
        };
    }
  }
  if (orderId === "") return { ok: false, code: "NO_ORDER_ID", message: "the claim names no order id (ord_…)" };
  const stated = text === undefined ? undefined : readClaimAmount(text, opts.now);
  if (output.amount_eur === null || !Number.isFinite(output.amount_eur)) {
    if (stated !== undefined && !stated.ok) return { ok: false, code: stated.code, message: stated.message };
    return {
      ok: false,
      code: "NO_AMOUNT",
      message: `the claim states no amount in EUR${stated?.ok ? ` (the extractor returned none, although the text reads as ${stated.value} ${stated.currency})` : ""}`,
    };
  }
  if (stated !== undefined && text !== undefined) {
    const checked = amountMatchesText(output.amount_eur, stated, text);
    if (!checked.ok) return checked;
    warnings.push(...checked.warnings);
  }
  // The claim's currency is the one the text states its amount in (read deterministically, `$` as USD, `¥` as
  // JPY); an extractor that names another is not believed. Without the text: the extractor's, EUR when none.
  const named = output.currency === null ? undefined : normalizeCurrency(output.currency);
  const currency = stated?.ok ? stated.currency : (named ?? "EUR");
  if (named !== undefined && named !== currency)
    return {
      ok: false,
      code: "AMBIGUOUS_AMOUNT",
      message: `the extractor read the amount as ${named}, but the text states it in ${currency}; a person must tell`,
    };
  if (!isCurrencyCode(currency))
    return {
      ok: false,
      code: "UNSUPPORTED_CURRENCY",
      message: `the claim's currency ${JSON.stringify(currency)} is not an ISO 4217 currency code`,
    };
  let purchaseDate: string | undefined;
  if (output.purchase_date !== null && output.purchase_date.trim() !== "") {
    purchaseDate = normalizeDate(output.purchase_date, opts.now);
    if (purchaseDate === undefined) warnings.push(`purchase date '${output.purchase_date}' is not a date; ignored`);
  }
  const category =
    output.category === null || output.category.trim() === "" ? "unspecified" : output.category.trim().toLowerCase();
  if (category === "unspecified") warnings.push("no category in the claim; recorded as 'unspecified'");
  const items = claimItems(output.items, warnings);
  const parsed = IntakeClaimSchema.safeParse({
    order_id: orderId,
    amount_eur: output.amount_eur,
    category,
    reason: output.reason.slice(0, 4000),
    currency,
    ...(purchaseDate === undefined ? {} : { purchase_date: purchaseDate }),
    ...(items.length === 0 ? {} : { items }),
  });
  if (!parsed.success) {
    return {
      ok: false,
      code: "INVALID_CLAIM",
      message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    };
  }
  return { ok: true, claim: parsed.data, warnings };
}

/**
 * The claim's items from the extractor's (docs/llm.md#items-and-lines): names trimmed, lower-cased and cut to 64
 * characters, each once; a count that is not a whole number from 1 to 100,000 is dropped with a warning (the item
 * then claims all its units). An answer without items (recorded before extraction read them) gives none.
 */
function claimItems(items: ClaimExtractionOutput["items"] | undefined, warnings: string[]): Claim["items"] & object {
  const out: NonNullable<Claim["items"]> = [];
  for (const item of items ?? []) {
    const name = item.name.replace(/\s+/g, " ").trim().toLowerCase().slice(0, 64).trim();
    if (name === "" || out.some((o) => o.name === name) || out.length >= 20) continue;
    const q = item.quantity;
    const counted = q !== null && Number.isSafeInteger(q) && q >= 1 && q <= 100_000;
    if (q !== null && !counted) warnings.push(`item '${name}': ${String(q)} is not a count of units; ignored`);
    out.push(counted ? { name, quantity: q } : { name });
  }
  return out;
}

/** Whether an extracted amount is the one the text states; a different amount the text also holds means the text is ambiguous. */
function amountMatchesText(
  amount: number,
  stated: ChosenAmount,
  text: string,
): { ok: true; warnings: string[] } | { ok: false; code: ClaimFromExtractionFailureCode; message: string } {
  const cents = (v: number) => Math.round(v * 100);
  if (stated.ok) {
    if (cents(stated.value) === cents(amount)) return { ok: true, warnings: stated.warnings };
    const inText = [...findAmounts(text), ...findWordAmounts(text).amounts].some(
      (a) => cents(a.value) === cents(amount),
    );
    return inText
      ? {
          ok: false,
          code: "AMBIGUOUS_AMOUNT",
          message: `the extractor chose ${amount} ${stated.currency} but the text reads as a claim for ${stated.value} ${stated.currency}; a person must tell which is claimed`,
        }
      : {
          ok: false,
          code: "AMOUNT_NOT_IN_TEXT",
          message: `extracted amount ${amount} ${stated.currency} is not an amount the claim text states (it reads as ${stated.value} ${stated.currency})`,
        };
  }
  if (stated.code === "NO_AMOUNT")
    return {
      ok: false,
      code: "AMOUNT_NOT_IN_TEXT",
      message: `extracted amount ${amount} EUR could not be found in the claim text: ${stated.message}`,
    };
  return { ok: false, code: stated.code, message: stated.message };
}

/** Whether `id` occurs in `text` as a whole token and looks like an id (letters and at least one digit, 3+ characters). */
function isStandaloneId(text: string, id: string): boolean {
  if (!/^[A-Za-z0-9][\w-]{2,}$/.test(id) || !/\d/.test(id)) return false;
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`, "i").test(text);
}

function normalizeCurrency(c: string): string {
  const t = c.trim().toLowerCase();
  if (t === "" || t === "€" || t === "eur" || t.startsWith("euro")) return "EUR";
  if (t === "$" || t === "us$" || t.startsWith("dollar")) return "USD";
  if (t === "¥" || t === "yen") return "JPY";
  return c.trim().toUpperCase();
}

/** The review code of an extraction whose model call failed: a model that could not be used is named as such, anything else is EXTRACTION_FAILED. */
export function extractionFailureReasonCode(llmFailureCode: string | undefined): string {
  return isModelUnavailable(llmFailureCode) ? llmFailureCode : "EXTRACTION_FAILED";
}
