// What the deterministic analyst sees in a claim: the claim's own statements held against the
// contract's boundaries. It never sees order records; the kernel checks those.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { findCategory } from "../extraction/category.ts";
import { containsInstructionLikeText, INSTRUCTION_NOTE } from "../extraction/signals.ts";
import { returnWindowDays } from "../kernel/policy.ts";

/** Something the analyst noticed about a claim. */
type AssessmentFlagCode =
  | "AMOUNT_NOT_POSITIVE"
  | "AMOUNT_ABOVE_LIMIT"
  | "CATEGORY_NOT_ALLOWED"
  | "CATEGORY_NOT_AUTHORISED"
  | "OUTSIDE_RETURN_WINDOW"
  | "PURCHASE_DATE_IN_FUTURE"
  | "NO_PURCHASE_DATE"
  | "INVALID_PURCHASE_DATE"
  | "NO_RECEIPT_TIME"
  | "NO_REASON"
  | "CATEGORY_CONTRADICTS_REASON"
  | "CURRENCY_NOT_IN_POLICY"
  | "INSTRUCTIONS_IN_TEXT";

/**
 * How a flag weighs: `boundary` — the claim as stated is outside a contract boundary (the kernel
 * enforces it on the order data); `unknown` — a fact is missing or contradictory (lowers confidence);
 * `human` — something a person should look at (the proposal escalates).
 */
type FlagWeight = "boundary" | "unknown" | "human";

/** One observation with the words the analyst writes for it. */
interface AssessmentFlag {
  readonly code: AssessmentFlagCode;
  readonly weight: FlagWeight;
  readonly detail: string;
}

/** The analyst's view of a claim: observations and one line per boundary. */
export interface ClaimAssessment {
  readonly flags: readonly AssessmentFlag[];
  readonly lines: readonly string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

function flag(code: AssessmentFlagCode, weight: FlagWeight, detail: string): AssessmentFlag {
  return { code, weight, detail };
}

/** Holds a claim's statements against the contract (and the agent's own authorised categories) as of `receivedAt`. */
export function assessClaim(
  claim: Claim,
  contract: ClaimsContract,
  opts: { responsibility?: ResponsibilityContract | undefined; receivedAt?: string | undefined } = {},
): ClaimAssessment {
  const flags: AssessmentFlag[] = [];
  const lines: string[] = [];
  const category = claim.category.trim().toLowerCase();
  const allowed = contract.allowed_refund_categories.map((c) => c.toLowerCase());

  if (allowed.includes(category)) {
    lines.push(`- Category: '${category}' is a refundable category.`);
  } else {
    const f = flag(
      "CATEGORY_NOT_ALLOWED",
      "boundary",
      `'${category}' is not among the refundable categories (${allowed.join(", ")})`,
    );
    flags.push(f);
    lines.push(`- Category: ${f.detail}.`);
  }
  const authorised = opts.responsibility?.authorized_categories.map((c) => c.toLowerCase()) ?? [];
  if (authorised.length > 0 && !authorised.includes(category)) {
    const f = flag(
      "CATEGORY_NOT_AUTHORISED",
      "boundary",
      `this agent is not authorised for '${category}' (only ${authorised.join(", ")})`,
    );
    flags.push(f);
    lines.push(`- Authority: ${f.detail}.`);
  }

  // The claim's amount is in the currency it states (EUR when it states none, as before currencies); it is held to
  // that currency's bound (`claims_bounds.currencies`, the flat amounts being EUR's), never converted.
  const currency = claimCurrency(claim);
  const limit = currencyLimit(contract, currency);
  if (!Number.isFinite(claim.amount_eur) || claim.amount_eur <= 0) {
    const f = flag(
      "AMOUNT_NOT_POSITIVE",
      "boundary",
      `the claimed amount ${claim.amount_eur} ${currency} is not a positive amount`,
    );
    flags.push(f);
    lines.push(`- Amount: ${f.detail}; nothing can be refunded as stated.`);
  } else if (limit === undefined) {
    const f = flag(
      "CURRENCY_NOT_IN_POLICY",
      "human",
      `the claim is stated in ${currency}, and the contract has no bounds for ${currency}`,
    );
    flags.push(f);
    lines.push(`- Currency: ${f.detail}.`);
  } else if (claim.amount_eur > limit) {
    const f = flag(
      "AMOUNT_ABOVE_LIMIT",
      "boundary",
      `${claim.amount_eur} ${currency} is above the ${limit} ${currency} limit for refunds without escalation`,
    );
    flags.push(f);
    lines.push(`- Amount: ${f.detail}; human approval is required.`);
  } else {
    lines.push(`- Amount: ${claim.amount_eur} ${currency} is within the ${limit} ${currency} limit.`);
  }

  lines.push(windowLine(claim, contract, opts.receivedAt, flags));

  const reason = claim.reason.trim();
  if (reason === "") {
    const f = flag("NO_REASON", "unknown", "the claim gives no reason");
    flags.push(f);
    lines.push(`- Reason: ${f.detail}.`);
  } else {
    const named = findCategory(reason);
    if (
      named.category !== null &&
      allowed.includes(named.category) &&
      named.category !== category &&
      /^[a-z]+$/.test(category)
    ) {
      const f = flag(
        "CATEGORY_CONTRADICTS_REASON",
        "unknown",
        `the reason describes a ${named.category} item but the claim says '${category}'`,
      );
      flags.push(f);
      lines.push(`- Consistency: ${f.detail}.`);
    }
  }
  if (
    containsInstructionLikeText(reason) ||
    reason.includes(INSTRUCTION_NOTE) ||
    containsInstructionLikeText(claim.order_id) ||
    containsInstructionLikeText(claim.category)
  ) {
    const f = flag(
      "INSTRUCTIONS_IN_TEXT",
      "human",
      "the customer's text contains instructions addressed to the system; they were treated as data",
    );
    flags.push(f);
    lines.push(`- Caution: ${f.detail}.`);
  }
  return { flags, lines };
}

/** The currency a claim's amount is stated in: its `currency` (upper case), else EUR (a claim from before currencies). */
export function claimCurrency(claim: Pick<Claim, "currency">): string {
  return claim.currency?.trim().toUpperCase() || "EUR";
}

/** The escalation limit of `currency` in its major unit: `currencies[currency]`, else the flat amount for EUR. */
function currencyLimit(contract: ClaimsContract, currency: string): number | undefined {
  const listed = contract.currencies?.[currency];
  if (listed) return listed.max_refund_without_escalation;
  return currency === "EUR" ? contract.max_refund_without_escalation : undefined;
}

function windowLine(
  claim: Claim,
  contract: ClaimsContract,
  receivedAt: string | undefined,
  flags: AssessmentFlag[],
): string {
  const days = returnWindowDays(contract, claim.category);
  if (claim.purchase_date === undefined) {
    const f = flag(
      "NO_PURCHASE_DATE",
      "unknown",
      `the claim states no purchase date, so the ${days}-day return window cannot be judged from the claim`,
    );
    flags.push(f);
    return `- Return window: ${f.detail}.`;
  }
  const purchased = parseIsoMs(claim.purchase_date);
  if (purchased === undefined) {
    const f = flag(
      "INVALID_PURCHASE_DATE",
      "unknown",
      `the stated purchase date '${claim.purchase_date}' is not a date`,
    );
    flags.push(f);
    return `- Return window: ${f.detail}.`;
  }
  const received = receivedAt === undefined ? undefined : parseIsoMs(receivedAt);
  if (received === undefined) {
    const f = flag(
      "NO_RECEIPT_TIME",
      "unknown",
      "the claim's receipt time is unknown, so the return window cannot be judged",
    );
    flags.push(f);
    return `- Return window: ${f.detail}.`;
  }
  if (purchased > received) {
    const f = flag(
      "PURCHASE_DATE_IN_FUTURE",
      "human",
      `the stated purchase date ${claim.purchase_date} is after the claim's receipt`,
    );
    flags.push(f);
    return `- Return window: ${f.detail}.`;
  }
  const ageDays = (received - purchased) / DAY_MS;
  const shown = Math.floor(ageDays);
  if (received - purchased > days * DAY_MS) {
    const f = flag(
      "OUTSIDE_RETURN_WINDOW",
      "boundary",
      `purchased ${claim.purchase_date}, ${shown} days before receipt, outside the ${days}-day return window`,
    );
    flags.push(f);
    return `- Return window: ${f.detail}.`;
  }
  return `- Return window: purchased ${claim.purchase_date}, ${shown} days before receipt, within the ${days}-day return window.`;
}

/** The analyst's plain-text assessment, as a careful model would write it. */
export function formatAssessment(claim: Claim, assessment: ClaimAssessment): string {
  const concerns = assessment.flags.filter((f) => f.weight !== "unknown" || f.code === "CATEGORY_CONTRADICTS_REASON");
  const recommendation = assessment.flags.some((f) => f.weight === "human")
    ? "Recommendation: a human should look at this claim before any refund."
    : assessment.flags.some((f) => f.weight === "boundary")
      ? "Recommendation: as stated, the claim is outside the contract's boundaries noted above; the order data decides."
      : "Recommendation: as stated, the claim is within the contract's boundaries; the order data must confirm it.";
  return [
    `Assessment of the claim for order ${claim.order_id} (${claim.category}, ${claim.amount_eur} ${claimCurrency(claim)}).`,
    ...assessment.lines,
    `Concerns: ${concerns.length === 0 ? "none" : concerns.map((f) => f.code).join(", ")}.`,
    recommendation,
  ].join("\n");
}

/** The compact crew's analysis: only what stands out (each flag's words), or that nothing does; capped at `maxChars`. */
export function formatCompactAssessment(assessment: ClaimAssessment, maxChars: number): string {
  const noted = assessment.flags.map((f) => f.detail);
  const text = noted.length === 0 ? "Within the contract as stated." : `${noted.join("; ")}.`;
  return text.length > maxChars ? `${text.slice(0, maxChars - 3)}...` : text;
}

/** Confidence that a proposal states the claim faithfully: 0.9 for a clean claim, less for each missing or contradictory fact. */
export function confidenceFrom(assessment: ClaimAssessment, opts: { analysisMissing?: boolean } = {}): number {
  let c = 0.9;
  for (const f of assessment.flags) {
    if (f.weight !== "unknown") continue;
    c -= f.code === "CATEGORY_CONTRADICTS_REASON" || f.code === "INVALID_PURCHASE_DATE" ? 0.15 : 0.05;
  }
  if (opts.analysisMissing === true) c -= 0.1;
  return Math.max(0, Math.round(c * 100) / 100);
}
