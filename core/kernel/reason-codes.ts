// Every reason code of the claims kernel, with its layer and verdict (docs/kernel.md), defined once.
import * as z from "zod";
import type { VerdictKind } from "../integrity/verdict.ts";

/**
 * The kernel layers by number (8b, 8c, 9b, 9c, 10b, 10c, 10d, 10e and 11b are 8.5, 8.6, 9.5, 9.7, 10.5, 10.6, 10.7, 10.8 and 11.5), plus the pass row. The order they run in
 * is the kernel's table (`KERNEL_TABLE` in kernel.ts): alignment (8) runs right after the schema (1).
 */
export const KERNEL_LAYERS = {
  1: "schema",
  2: "validity",
  3: "order",
  4: "category",
  5: "window",
  6: "amount",
  7: "balance",
  8: "alignment",
  8.5: "customer",
  8.6: "claim_currency",
  9: "uncertainty",
  9.5: "customer_unverified",
  9.7: "line",
  10: "date_sanity",
  10.5: "open_review",
  10.6: "prior_decision",
  10.7: "resubmitted",
  10.8: "currency",
  11: "limit",
  11.5: "customer_limit",
  12: "pass",
} as const;

/** A kernel layer number, 1–11 (with 8.5, 9.5, 10.5, 10.6, 10.7, 11.5), and 12 for "all passed". */
type KernelLayer = keyof typeof KERNEL_LAYERS;

/** The number of a layer that runs checks: every layer but the pass row. */
export type KernelLayerId = Exclude<KernelLayer, 12>;

/** Each reason code with the layer that emits it and the verdict it carries; every REJECT check runs before any ESCALATE check but alignment (8). */
export const REASON_CODES = {
  SCHEMA_INVALID: { layer: 1, verdict: "REJECT" },
  IDEMPOTENCY_KEY_MISMATCH: { layer: 1, verdict: "REJECT" },
  PROPOSAL_ID_MISMATCH: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_MISSING: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_UNKNOWN: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_NOT_ALLOWED: { layer: 1, verdict: "REJECT" },
  AGENT_NOT_REGISTERED: { layer: 1, verdict: "REJECT" },
  AGENT_NOT_AUTHORISED: { layer: 1, verdict: "REJECT" },
  TTL_EXPIRED: { layer: 2, verdict: "REJECT" },
  ORDER_ID_MISSING: { layer: 3, verdict: "REJECT" },
  ORDER_NOT_FOUND: { layer: 3, verdict: "REJECT" },
  LINE_NOT_IN_ORDER: { layer: 3, verdict: "REJECT" },
  CATEGORY_NOT_ALLOWED: { layer: 4, verdict: "REJECT" },
  CATEGORY_NOT_AUTHORISED: { layer: 4, verdict: "REJECT" },
  OUTSIDE_RETURN_WINDOW: { layer: 5, verdict: "REJECT" },
  INVALID_AMOUNT: { layer: 6, verdict: "REJECT" },
  EXCEEDS_REFUNDABLE_BALANCE: { layer: 7, verdict: "REJECT" },
  PROPOSAL_MISMATCH: { layer: 8, verdict: "ESCALATE" },
  CUSTOMER_MISMATCH: { layer: 8.5, verdict: "REJECT" },
  CURRENCY_MISMATCH: { layer: 8.6, verdict: "REJECT" },
  AGENT_REQUESTED_ESCALATION: { layer: 9, verdict: "ESCALATE" },
  REPLACEMENT_REQUIRES_REVIEW: { layer: 9, verdict: "ESCALATE" },
  LOW_CONFIDENCE: { layer: 9, verdict: "ESCALATE" },
  CUSTOMER_UNVERIFIED: { layer: 9.5, verdict: "ESCALATE" },
  LINE_AMBIGUOUS: { layer: 9.7, verdict: "ESCALATE" },
  PURCHASE_DATE_IN_FUTURE: { layer: 10, verdict: "ESCALATE" },
  REVIEW_PENDING_ON_ORDER: { layer: 10.5, verdict: "ESCALATE" },
  PRIOR_DECISION_ON_ORDER: { layer: 10.6, verdict: "ESCALATE" },
  RESUBMITTED_CLAIM: { layer: 10.7, verdict: "ESCALATE" },
  CURRENCY_NOT_IN_POLICY: { layer: 10.8, verdict: "ESCALATE" },
  AMOUNT_ABOVE_LIMIT: { layer: 11, verdict: "ESCALATE" },
  CUSTOMER_LIMIT_EXCEEDED: { layer: 11.5, verdict: "ESCALATE" },
  VALIDATION_PASSED: { layer: 12, verdict: "ACCEPT" },
} as const satisfies Record<string, { layer: KernelLayer; verdict: VerdictKind }>;

/**
 * The code of a claim whose order facts could not be read: the shop's order API stayed down, slow or garbled for
 * longer than the claim may wait (docs/orders.md). A claim ends NEEDS_REVIEW with it, never a verdict.
 */
export const ORDER_SOURCE_UNAVAILABLE = "ORDER_SOURCE_UNAVAILABLE";

/** A claims kernel reason code. */
export type ClaimReasonCode = keyof typeof REASON_CODES;

/** The reason code schema, for events and stored verdicts. */
export const ClaimReasonCodeSchema = z.enum(Object.keys(REASON_CODES) as [ClaimReasonCode, ...ClaimReasonCode[]]);

/**
 * What a customer may be told about a final claim, by reason code: the rule, never an order fact (no amounts,
 * dates or balances). Codes of the crew, intake and ledger that end a claim in review are here too.
 */
const CUSTOMER_MESSAGES: Readonly<Record<string, string>> = {
  VALIDATION_PASSED: "Your refund has been approved.",
  SCHEMA_INVALID: "We could not process this claim automatically; it has been closed. Please contact support.",
  IDEMPOTENCY_KEY_MISMATCH:
    "We could not process this claim automatically; it has been closed. Please contact support.",
  PROPOSAL_ID_MISMATCH: "We could not process this claim automatically; it has been closed. Please contact support.",
  POLICY_KIND_MISSING: "We could not process this claim automatically; it has been closed. Please contact support.",
  POLICY_KIND_UNKNOWN: "We could not process this claim automatically; it has been closed. Please contact support.",
  POLICY_KIND_NOT_ALLOWED:
    "This kind of request cannot be granted automatically; it has been closed. Please contact support.",
  AGENT_NOT_REGISTERED: "We could not process this claim automatically; it has been closed. Please contact support.",
  AGENT_NOT_AUTHORISED: "We could not process this claim automatically; it has been closed. Please contact support.",
  TTL_EXPIRED: "Your claim took too long to process and has been closed. Please submit it again.",
  ORDER_ID_MISSING: "Your claim does not name an order. Please submit it again with the order number.",
  ORDER_NOT_FOUND: "We could not find the order named in your claim. Please check the order number.",
  LINE_NOT_IN_ORDER:
    "The items named in your claim are not part of this order (or more of them than were bought). Please check them.",
  CATEGORY_NOT_ALLOWED: "Products of this category cannot be refunded under our refund policy.",
  CATEGORY_NOT_AUTHORISED: "Products of this category cannot be refunded under our refund policy.",
  OUTSIDE_RETURN_WINDOW: "The return period for this order has ended, so it can no longer be refunded.",
  INVALID_AMOUNT: "The amount in your claim is not a valid refund amount.",
  EXCEEDS_REFUNDABLE_BALANCE: "The amount requested is more than can still be refunded on this order.",
  CUSTOMER_MISMATCH: "This order is not registered to the customer named in the claim.",
  CURRENCY_MISMATCH:
    "Your claim is in another currency than the order was paid in. Please submit it again in the order's currency.",
  PROPOSAL_MISMATCH: "Your claim needs a closer look; a member of our team will review it.",
  AGENT_REQUESTED_ESCALATION: "Your claim needs a closer look; a member of our team will review it.",
  REPLACEMENT_REQUIRES_REVIEW: "Your claim needs a closer look; a member of our team will review it.",
  LOW_CONFIDENCE: "Your claim needs a closer look; a member of our team will review it.",
  CUSTOMER_UNVERIFIED:
    "We need to confirm who you are before refunding this order; a member of our team will review it.",
  PURCHASE_DATE_IN_FUTURE: "Your claim needs a closer look; a member of our team will review it.",
  REVIEW_PENDING_ON_ORDER: "Another claim on this order is being reviewed; a member of our team will review yours too.",
  AMOUNT_ABOVE_LIMIT: "Refunds of this size are approved by a member of our team; your claim is waiting for review.",
  [ORDER_SOURCE_UNAVAILABLE]: "We could not check your order just now; a member of our team will review your claim.",
  PRIOR_DECISION_ON_ORDER: "A member of our team has already decided on this order; they will review your claim too.",
  RESUBMITTED_CLAIM: "Your corrected claim is checked by a member of our team before any refund.",
  CUSTOMER_LIMIT_EXCEEDED: "Your claim needs a closer look; a member of our team will review it.",
  LINE_AMBIGUOUS: "Your claim needs a closer look to tell which item it is about; a member of our team will review it.",
  CURRENCY_NOT_IN_POLICY: "Your claim needs a closer look; a member of our team will review it.",
  // The return's outcomes (docs/returns.md): a claim ends with them after its ACCEPT waited for the item.
  RETURN_NOT_RECEIVED: "We did not receive the item back in time, so the refund was not paid. Please contact support.",
  RETURN_INSPECTION_FAILED:
    "The returned item did not pass our inspection; a member of our team will review your claim.",
  RETURN_AFTER_DEADLINE: "Your return arrived after the return deadline; a member of our team will review your claim.",
};

/** The customer-facing message for a final claim's reason code (a generic review message for codes not listed). */
export function customerMessageFor(reasonCode: string | undefined, verdict: string | undefined): string {
  if (reasonCode !== undefined && Object.hasOwn(CUSTOMER_MESSAGES, reasonCode)) return CUSTOMER_MESSAGES[reasonCode]!;
  return verdict === "REJECT"
    ? "Your claim could not be granted."
    : "Your claim needs a closer look; a member of our team will review it.";
}
