// The kernel's escalation layers (docs/kernel.md): a person decides when the agent is unsure (9), the customer is
// unknown (9b), the dates are odd (10), a review is open (10b), a person decided (10c), the claim was resubmitted
// (10d), or the refund passes the limit (11) or the customer's limit (11b). A reviewer's approval lifts them all.
import { KernelInputError } from "../integrity/errors.ts";
import { assertCustomerWindow, customerLimitExcess } from "./customer-window.ts";
import { check, fail, PASSED, proposalOf, show, SKIPPED, subjectOf, type KernelState } from "./kernel-state.ts";
import { automaticRefundedCents, bindingDecisions, describeDecision, otherPendingReviews } from "./ledger.ts";
import { add, compare, describeMoney, money } from "./money.ts";
import { customerLimitsCents } from "./customer-window.ts";

// ---- layer 9 — uncertainty: the agent asked for a human, proposes a replacement (no automatic executor), or is
// unsure.

export const policyKindEscalation = check(
  "policy_kind_escalation",
  ["AGENT_REQUESTED_ESCALATION", "REPLACEMENT_REQUIRES_REVIEW"],
  (s) => {
    if (s.policyKind === "ESCALATE")
      return fail(
        "AGENT_REQUESTED_ESCALATION",
        `Agent ${proposalOf(s).agent_id} requested escalation. Human approval required.`,
      );
    if (s.policyKind === "REPLACE")
      return fail(
        "REPLACEMENT_REQUIRES_REVIEW",
        `Replacement for order ${subjectOf(s).order.order_id} has no automatic executor. Human approval required.`,
      );
    return PASSED;
  },
);

export const confidence = check("confidence", ["LOW_CONFIDENCE"], (s) => {
  const { confidence: c } = proposalOf(s);
  const threshold = s.input.responsibility.escalate_on_uncertainty;
  return c >= threshold
    ? PASSED
    : fail("LOW_CONFIDENCE", `Confidence ${c} below escalate_on_uncertainty (${threshold}). Human approval required.`);
});

// ---- layer 9b — customer unknown: an order bound to a customer, a claim that names none.

export const customerVerified = check("customer_verified", ["CUSTOMER_UNVERIFIED"], (s) => {
  const { order } = subjectOf(s);
  return order.customer_id === undefined || s.input.claim.customer_id !== undefined
    ? PASSED
    : fail(
        "CUSTOMER_UNVERIFIED",
        `Order ${order.order_id} belongs to a customer and the claim names none. Human review required.`,
      );
});

// ---- layer 10 — date sanity: an order bought after the claim was received is a data problem for a human.

export const purchaseDateSanity = check("purchase_date_sanity", ["PURCHASE_DATE_IN_FUTURE"], (s) => {
  const { order, purchaseMs } = subjectOf(s);
  return purchaseMs <= s.receivedMs
    ? PASSED
    : fail(
        "PURCHASE_DATE_IN_FUTURE",
        `Order ${order.order_id} purchase date ${order.purchase_date} is after the claim was received (${s.input.receivedAt}). Human review required.`,
      );
});

// ---- layer 10b — open review: while another claim on the order awaits a person, the person sees this one too.

export const openReview = check("open_review", ["REVIEW_PENDING_ON_ORDER"], (s) => {
  const pending = otherPendingReviews(s.input.ledgerEntry, s.input.claimId);
  return pending.length === 0
    ? PASSED
    : fail(
        "REVIEW_PENDING_ON_ORDER",
        `Another claim on order ${subjectOf(s).order.order_id} awaits human review (${pending.join(", ")}). Human review required.`,
      );
});

// ---- layer 11 — limit: the amount plus what was already refunded automatically on the order must stay within
// max_refund_without_escalation (exactly the limit passes), so splitting a claim never gets around a human.

export const amountLimit = check("amount_limit", ["AMOUNT_ABOVE_LIMIT"], (s) => {
  const amount = s.amount!;
  const bound = subjectOf(s).policy!.limit;
  const automatic = money(automaticRefundedCents(s.input.ledgerEntry, s.input.claimId), amount.currency);
  if (compare(add(amount, automatic), bound) <= 0) return PASSED;
  const limit = describeMoney(bound);
  return fail(
    "AMOUNT_ABOVE_LIMIT",
    automatic.minor === 0
      ? `Amount ${describeMoney(amount)} exceeds max_refund_without_escalation (${limit}). Human approval required.`
      : `Amount ${describeMoney(amount)} plus ${describeMoney(automatic)} already refunded automatically on order ${subjectOf(s).order.order_id} exceeds max_refund_without_escalation (${limit}). Human approval required.`,
  );
});

// ---- layer 10c — person decided: once a person DENIED a claim on the order, or APPROVED one for less than it
// proposed, no later claim on the order is refunded without a person.

export const priorDecision = check("prior_decision", ["PRIOR_DECISION_ON_ORDER"], (s) => {
  const bound = bindingDecisions(s.input.ledgerEntry, s.input.claimId);
  return bound.length === 0
    ? PASSED
    : fail(
        "PRIOR_DECISION_ON_ORDER",
        `On order ${subjectOf(s).order.order_id} ${bound.map(describeDecision).join("; ")}. Human review required.`,
      );
});

// ---- layer 10d — resubmitted: a claim a reviewer resubmitted is never refunded without a (second) person.

export const resubmitted = check("resubmitted", ["RESUBMITTED_CLAIM"], (s) => {
  const parent = s.input.parentClaimId;
  return parent === undefined
    ? PASSED
    : fail(
        "RESUBMITTED_CLAIM",
        `Claim was resubmitted by a reviewer from claim ${parent}; a resubmitted claim is never refunded automatically. Human approval required.`,
      );
});

// ---- layer 11b — customer limit: the ORDER's customer stays within claims_bounds.customer_limits with this refund,
// counting every automatic refund reserved for them in the window (exactly the limit passes). Orders without a
// customer are not bound.

export const customerLimit = check("customer_limit", ["CUSTOMER_LIMIT_EXCEEDED"], (s) => {
  const { order, policy } = subjectOf(s);
  const limits = policy?.customerLimits === undefined ? undefined : policyCustomerLimits(s, policy.currency);
  if (limits === undefined || order.customer_id === undefined) return SKIPPED;
  const window = s.input.customerWindow;
  if (window !== undefined) {
    if (window.customer_id !== order.customer_id)
      throw new KernelInputError(
        `kernel was handed the window of customer ${window.customer_id} for order ${order.order_id} of ${order.customer_id}`,
      );
    try {
      assertCustomerWindow(window);
    } catch (cause) {
      throw new KernelInputError(`kernel was handed a corrupt window for customer ${order.customer_id}`, { cause });
    }
  }
  const excess = customerLimitExcess(
    window ?? { customer_id: order.customer_id, reservations: [], version: 0 },
    s.amount!.minor,
    s.decidedMs,
    limits,
    s.input.claimId,
  );
  return excess === undefined ? PASSED : fail("CUSTOMER_LIMIT_EXCEEDED", `${excess}. Human approval required.`);
});

/** The customer limit of the order's currency: the flat one checked once for EUR, else the currency's own. */
function policyCustomerLimits(s: KernelState, currency: string) {
  if (currency === "EUR" && s.input.contract.currencies?.EUR === undefined) return s.customerLimits;
  const limits = subjectOf(s).policy!.customerLimits!;
  try {
    return customerLimitsCents(limits, currency);
  } catch (cause) {
    throw new KernelInputError(`contract.currencies.${currency}.${(cause as Error).message}`, { cause });
  }
}

// ---- layer 9c — line: a claim in today's form names a category; on an order with several lines of it (or none of
// it), only a person can say which line is claimed. Not run (nor traced) on an order of one line.

export const lineKnown = check("line_known", ["LINE_AMBIGUOUS"], (s) => {
  const { order, view, lines, named } = subjectOf(s);
  if (view.lines.length === 1) return SKIPPED;
  if (named?.ok) return PASSED;
  if (lines.length === 1) return PASSED;
  const { items } = s.input.claim;
  const which = lines.map((l) => l.line_id).join(", ");
  if (items !== undefined && s.input.claim.lines === undefined)
    return fail(
      "LINE_AMBIGUOUS",
      `Claim names items ${items.map((i) => show(i.name)).join(", ")}, which do not each match one line of order ${order.order_id} (they could mean ${which}). Human review required.`,
    );
  return fail(
    "LINE_AMBIGUOUS",
    `Claim names category ${show(s.input.claim.category)}, which matches ${lines.length === view.lines.length ? "no single line" : `${lines.length} lines`} of order ${order.order_id} (${which}). Human review required.`,
  );
});

// ---- layer 10e — currency: the policy has bounds for the order's currency (its flat amounts are EUR's, so an EUR
// order always has; the check is not run, and not traced, for one).

export const currencyInPolicy = check("currency_in_policy", ["CURRENCY_NOT_IN_POLICY"], (s) => {
  const { order, view, policy } = subjectOf(s);
  if (view.currency === "EUR") return SKIPPED;
  return policy !== undefined
    ? PASSED
    : fail(
        "CURRENCY_NOT_IN_POLICY",
        `Order ${order.order_id} is in ${view.currency} and claims_bounds has no bounds for it (currencies.${view.currency}). Human review required.`,
      );
});
