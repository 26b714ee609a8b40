// The claims kernel: a pure function from (proposal, claim, contracts, registry, order, ledger, times) to a verdict,
// written as an ordered table of named layers, each a list of named checks.
import type * as z from "zod";
import { canonicalizeStable } from "../crew/canonical.ts";
import type { Sha256Hex } from "../crew/hash.ts";
import {
  PolicyKindSchema,
  type ClaimsContract,
  type Order,
  type PolicyKind,
  type ResponsibilityContract,
} from "../integrity/contracts.ts";
import { KernelInputError } from "../integrity/errors.ts";
import {
  assertCustomerWindow,
  customerLimitExcess,
  customerLimitsCents,
  type CustomerLimitsCents,
  type CustomerWindow,
} from "./customer-window.ts";
import {
  assertLedgerEntry,
  automaticRefundedCents,
  bindingDecisions,
  describeDecision,
  otherPendingReviews,
  reservedForClaim,
  type LedgerEntry,
} from "./ledger.ts";
import { formatEur, parseCents } from "./money.ts";
import { computeIdempotencyKey, ProposalEnvelopeSchema, proposalIdFor } from "../integrity/proposal.ts";
import { findRegisteredAgent, type RegistryView } from "../integrity/registry.ts";
import { DAY_MS, formatDuration, parseIsoMs } from "../integrity/time.ts";
import { PASS_LAYER, type Verdict, type VerdictCheck } from "../integrity/verdict.ts";
import type { Claim } from "../claim/claim.ts";
import { REASON_CODES, type ClaimReasonCode, type KERNEL_LAYERS, type KernelLayerId } from "./reason-codes.ts";

/** A verdict of the claims kernel. */
export type ClaimVerdict = Verdict<ClaimReasonCode>;

/** Everything the kernel decides from; all of it is plain data and none of it is mutated. */
export type DecideClaimInput = {
  /** The proposal as received (unknown: layer 1 is "the proposal parses"). */
  proposal: unknown;
  /** The claim the proposal answers. */
  claim: Claim;
  /** The claims bounds. */
  contract: ClaimsContract;
  /** The responsibility contract of the proposing agent, as it registered. */
  responsibility: ResponsibilityContract;
  /** The agent registry (a snapshot or an `AgentRegistry`). */
  registry: RegistryView;
  /** The context store's order for the proposal's order id, or `undefined` when unknown. */
  order: Order | undefined;
  /** The refund ledger entry of that order, or `undefined` when nothing was refunded on it. */
  ledgerEntry: LedgerEntry | undefined;
  /**
   * The customer's window of automatic refunds (the ORDER's customer), when the contract has `customer_limits` and
   * the order a `customer_id`; `undefined` when nothing was reserved for the customer yet.
   */
  customerWindow?: CustomerWindow | undefined;
  /** The claim this one was resubmitted from by a reviewer (RESUBMIT): such a claim is never refunded without a person. */
  parentClaimId?: string | undefined;
  /** When the claim was received (ISO); the return window counts back from here. */
  receivedAt: string;
  /** When the kernel sees the proposal (ISO); the validity window counts up to here. */
  decidedAt: string;
  /** The claim's id: its own reservation on the ledger is not counted against it, so a replay after execution decides the same. */
  claimId?: string;
  /** The claim's decision flow id: when given, a proposal of another flow is `PROPOSAL_MISMATCH`. */
  dfid?: string;
  /**
   * A reviewer approves (docs/reviews.md): the escalation checks (layers 9–11b) are lifted and nothing else; the
   * reject checks run again against the ledger as it stands.
   */
  approval?: { amountEur?: number };
  /** How to compute the SHA-256 the idempotency key check needs (any implementation decides the same); default the pure one of core/crew/hash.ts. */
  sha256?: Sha256Hex;
};

/**
 * What the checks read: the input, its times and limit checked once, and the facts earlier checks
 * established. A fact is set by the check named beside it and read only by checks after it in the table.
 */
type KernelState = {
  readonly input: Readonly<DecideClaimInput>;
  readonly decidedMs: number;
  readonly receivedMs: number;
  readonly limitCents: number;
  /** The customer limit, when the contract has one. */
  readonly customerLimits: CustomerLimitsCents | undefined;
  /** The order id asked for: the proposal's (proposal_schema). */
  orderId: unknown;
  /** The amount asked for: the proposal's (proposal_schema). */
  amountEur: unknown;
  /** The parsed proposal and its creation time (proposal_schema). */
  envelope: { p: z.infer<typeof ProposalEnvelopeSchema>; createdMs: number } | undefined;
  /** The proposal's policy kind (policy_kind). */
  policyKind: PolicyKind | undefined;
  /** The order with its purchase time and amount (order_exists). */
  subject: { order: Order; purchaseMs: number; orderCents: number } | undefined;
  /** The amount judged, in cents (amount_valid). */
  amountCents: number | undefined;
};

/** The facts a check may establish for the checks after it. */
type KernelFacts = Partial<
  Pick<KernelState, "orderId" | "amountEur" | "envelope" | "policyKind" | "subject" | "amountCents">
>;

/** What one check found: passed (maybe with facts for later checks), failed with a reason code, or not applicable. */
type CheckResult<Code extends ClaimReasonCode> =
  | { readonly outcome: "pass"; readonly learned?: KernelFacts }
  | { readonly outcome: "fail"; readonly code: Code; readonly reason: string }
  | { readonly outcome: "skip" };

/** One named check: the reason codes it can fail with, and the pure function that runs it. */
type KernelCheck = {
  readonly name: string;
  readonly codes: readonly ClaimReasonCode[];
  readonly run: (s: KernelState) => CheckResult<ClaimReasonCode>;
};

/** One row of the table: a layer (its id and name), the checks it runs in order, and whether an approval lifts it. */
type KernelLayer = {
  readonly layer: KernelLayerId;
  readonly name: string;
  readonly liftedByApproval: boolean;
  readonly checks: readonly KernelCheck[];
};

const PASSED = { outcome: "pass" } as const;
const SKIPPED = { outcome: "skip" } as const;
const passWith = (learned: KernelFacts) => ({ outcome: "pass", learned }) as const;
const fail = <Code extends ClaimReasonCode>(code: Code, reason: string) => ({ outcome: "fail", code, reason }) as const;

const check = <const Code extends ClaimReasonCode>(
  name: string,
  codes: readonly Code[],
  run: (s: KernelState) => CheckResult<Code>,
): KernelCheck => ({ name, codes, run });

const layer = <L extends KernelLayerId>(
  id: L,
  name: (typeof KERNEL_LAYERS)[L],
  checks: readonly KernelCheck[],
  options: { liftedByApproval?: boolean } = {},
): KernelLayer => ({ layer: id, name, liftedByApproval: options.liftedByApproval ?? false, checks });

// Facts read by a check are established by an earlier one (see KernelState); the table's order guarantees it.
const proposalOf = (s: KernelState) => s.envelope!.p;
const subjectOf = (s: KernelState) => s.subject!;

// ---- layer 1 — schema: the proposal parses, is intact, its kind is allowed, its agent registered and authorised.

const proposalSchema = check("proposal_schema", ["SCHEMA_INVALID"], (s) => {
  const parsed = ProposalEnvelopeSchema.safeParse(s.input.proposal);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
    return fail("SCHEMA_INVALID", `Proposal does not parse: ${issues.join("; ")}`);
  }
  const p = parsed.data;
  const createdMs = parseIsoMs(p.created_at);
  if (createdMs === undefined)
    return fail("SCHEMA_INVALID", `Proposal does not parse: created_at: ${show(p.created_at)} is not a real date`);
  return passWith({ envelope: { p, createdMs }, orderId: p.params.order_id, amountEur: p.params.amount_eur });
});

const idempotencyKey = check("idempotency_key", ["IDEMPOTENCY_KEY_MISMATCH"], (s) => {
  const p = proposalOf(s);
  return computeIdempotencyKey(p, s.input.sha256) === p.idempotency_key
    ? PASSED
    : fail(
        "IDEMPOTENCY_KEY_MISMATCH",
        "Proposal idempotency_key does not match its content (SHA-256 of the DFID and the canonical proposal)",
      );
});

const proposalId = check("proposal_id", ["PROPOSAL_ID_MISMATCH"], (s) => {
  const p = proposalOf(s);
  return p.proposal_id === proposalIdFor(p.idempotency_key)
    ? PASSED
    : fail("PROPOSAL_ID_MISMATCH", `Proposal id ${show(p.proposal_id)} is not derived from its idempotency_key`);
});

const policyKind = check(
  "policy_kind",
  ["POLICY_KIND_MISSING", "POLICY_KIND_UNKNOWN", "POLICY_KIND_NOT_ALLOWED"],
  ({ input: { responsibility }, envelope }) => {
    const raw = envelope!.p.policy_kind;
    if (raw === undefined || raw === null || raw === "")
      return fail("POLICY_KIND_MISSING", "Proposal has no policy kind");
    const kind = PolicyKindSchema.safeParse(raw);
    if (!kind.success)
      return fail(
        "POLICY_KIND_UNKNOWN",
        `Policy kind ${show(raw)} is not one of ${PolicyKindSchema.options.join(", ")}`,
      );
    if (!responsibility.allowed_policy_types.includes(kind.data))
      return fail(
        "POLICY_KIND_NOT_ALLOWED",
        `Policy kind '${kind.data}' not in allowed_policy_types [${responsibility.allowed_policy_types.join(", ")}] of agent ${responsibility.agent_id}`,
      );
    return passWith({ policyKind: kind.data });
  },
);

const agentRegistered = check("agent_registered", ["AGENT_NOT_REGISTERED"], (s) => {
  const { agent_id } = proposalOf(s);
  return findRegisteredAgent(s.input.registry, agent_id)
    ? PASSED
    : fail("AGENT_NOT_REGISTERED", `Agent ${show(agent_id)} is not registered`);
});

const agentAuthorised = check("agent_authorised", ["AGENT_NOT_AUTHORISED"], (s) => {
  const { agent_id } = proposalOf(s);
  const agent = findRegisteredAgent(s.input.registry, agent_id)!;
  const unauthorised =
    agent.status !== "ACTIVE"
      ? "its registration was revoked"
      : agent_id !== s.input.responsibility.agent_id
        ? `the kernel enforces the contract of agent ${s.input.responsibility.agent_id}`
        : canonicalizeStable(agent.contract) !== canonicalizeStable(s.input.responsibility)
          ? "its registered contract differs from the contract the kernel enforces"
          : undefined;
  return unauthorised === undefined
    ? PASSED
    : fail("AGENT_NOT_AUTHORISED", `Agent ${show(agent_id)} is not authorised: ${unauthorised}`);
});

// ---- layer 8 — alignment: the proposal answers this claim — same flow, same order, no more than claimed, and a
// positive amount when the claim's is.

const flowAlignment = check("flow_alignment", ["PROPOSAL_MISMATCH"], (s) => {
  if (s.input.dfid === undefined) return SKIPPED;
  const { dfid } = proposalOf(s);
  return dfid === s.input.dfid
    ? PASSED
    : fail("PROPOSAL_MISMATCH", `Proposal belongs to decision flow ${show(dfid)}, not ${s.input.dfid}`);
});

const orderAlignment = check("order_alignment", ["PROPOSAL_MISMATCH"], ({ input: { claim }, orderId }) =>
  orderId === claim.order_id
    ? PASSED
    : fail(
        "PROPOSAL_MISMATCH",
        `Proposal order ${show(orderId)} differs from the claim's order ${show(claim.order_id)}`,
      ),
);

const amountAlignment = check("amount_alignment", ["PROPOSAL_MISMATCH"], ({ input: { claim }, amountEur }) => {
  const claimed = parseCents(claim.amount_eur);
  const proposed = parseCents(amountEur);
  const claimedText = claimed.ok ? formatEur(claimed.cents) : String(claim.amount_eur);
  if (proposed.ok && (claimed.ok ? proposed.cents > claimed.cents : proposed.cents / 100 > claim.amount_eur))
    return fail(
      "PROPOSAL_MISMATCH",
      `Proposal amount ${formatEur(proposed.cents)} EUR exceeds the claimed amount ${claimedText} EUR`,
    );
  if (claim.amount_eur > 0 && (!proposed.ok || proposed.cents <= 0))
    return fail(
      "PROPOSAL_MISMATCH",
      `Proposal amount ${show(amountEur)} is not a positive amount for a claim of ${claimedText} EUR`,
    );
  return PASSED;
});

// ---- layer 2 — validity: the proposal is not older than its validity window when the kernel sees it (exactly at
// it passes).

const ttl = check("ttl", ["TTL_EXPIRED"], (s) => {
  const { p, createdMs } = s.envelope!;
  const ageMs = s.decidedMs - createdMs;
  return ageMs <= p.valid_for_ms
    ? PASSED
    : fail(
        "TTL_EXPIRED",
        `Proposal expired: created ${p.created_at}, seen ${s.input.decidedAt}, ${ageMs} ms old, valid for ${p.valid_for_ms} ms`,
      );
});

// ---- layer 3 — order: an order is named and the context store knows it (the order handed in must be that order,
// and the ledger entry its own and sound, or the caller wired the kernel wrongly).

const orderIdPresent = check("order_id_present", ["ORDER_ID_MISSING"], ({ orderId }) =>
  typeof orderId === "string" && orderId.trim() !== "" ? PASSED : fail("ORDER_ID_MISSING", "Proposal has no order id"),
);

const orderExists = check("order_exists", ["ORDER_NOT_FOUND"], ({ input: { order, ledgerEntry }, orderId }) => {
  if (!order) return fail("ORDER_NOT_FOUND", `Order ${show(orderId)} not found in the context store`);
  if (order.order_id !== orderId)
    throw new KernelInputError(`kernel was handed order ${order.order_id} for a proposal naming ${show(orderId)}`);
  const purchaseMs = parseIsoMs(order.purchase_date);
  if (purchaseMs === undefined)
    throw new KernelInputError(
      `order ${order.order_id}: purchase_date ${show(order.purchase_date)} is not an ISO-8601 date`,
    );
  const orderCents = parseCents(order.amount);
  if (!orderCents.ok || orderCents.cents <= 0)
    throw new KernelInputError(
      `order ${order.order_id}: amount ${orderCents.ok ? "must be positive" : orderCents.message}`,
    );
  if (ledgerEntry) {
    if (ledgerEntry.order_id !== order.order_id)
      throw new KernelInputError(
        `kernel was handed the ledger entry of order ${ledgerEntry.order_id} for order ${order.order_id}`,
      );
    try {
      assertLedgerEntry(ledgerEntry);
    } catch (cause) {
      throw new KernelInputError(`kernel was handed a corrupt ledger entry for order ${order.order_id}`, { cause });
    }
  }
  return passWith({ subject: { order, purchaseMs, orderCents: orderCents.cents } });
});

// ---- layer 4 — category: the ORDER's category (never the claim's) is refundable, and this agent may refund it.

const categoryAllowed = check("category_allowed", ["CATEGORY_NOT_ALLOWED"], (s) => {
  const { category } = subjectOf(s).order;
  const allowed = s.input.contract.allowed_refund_categories;
  return allowed.includes(category)
    ? PASSED
    : fail("CATEGORY_NOT_ALLOWED", `Category '${category}' not in allowed_refund_categories [${allowed.join(", ")}]`);
});

const categoryAuthorised = check("category_authorised", ["CATEGORY_NOT_AUTHORISED"], (s) => {
  const { category } = subjectOf(s).order;
  const { authorized_categories: authorised, agent_id } = s.input.responsibility;
  return authorised.length === 0 || authorised.includes(category)
    ? PASSED
    : fail(
        "CATEGORY_NOT_AUTHORISED",
        `Category '${category}' not in the authorised categories [${authorised.join(", ")}] of agent ${agent_id}`,
      );
});

// ---- layer 5 — window: the order's purchase is at most return_window_days × 24 h before the claim's receipt.

const returnWindow = check("return_window", ["OUTSIDE_RETURN_WINDOW"], (s) => {
  const { order, purchaseMs } = subjectOf(s);
  const days = s.input.contract.return_window_days;
  const elapsedMs = s.receivedMs - purchaseMs;
  return elapsedMs <= days * DAY_MS
    ? PASSED
    : fail(
        "OUTSIDE_RETURN_WINDOW",
        `Order ${order.order_id} outside return window (purchased ${order.purchase_date}, ${formatDuration(elapsedMs)} before the claim was received; return_window_days: ${days})`,
      );
});

// ---- layer 6 — amount: a positive JSON number exact to the cent. An approval may grant less than proposed (never
// more: the review service checks); the reject checks judge that amount.

const amountValid = check("amount_valid", ["INVALID_AMOUNT"], (s) => {
  const amount = parseCents(s.input.approval?.amountEur ?? s.amountEur);
  if (!amount.ok) return fail("INVALID_AMOUNT", `Invalid refund amount: ${amount.message}`);
  if (amount.cents <= 0)
    return fail("INVALID_AMOUNT", `Invalid refund amount: ${formatEur(amount.cents)} EUR is not positive`);
  return passWith({ amountCents: amount.cents });
});

// ---- layer 7 — balance: the amount fits in what is left of the order after other claims' refunds.

const refundableBalance = check("refundable_balance", ["EXCEEDS_REFUNDABLE_BALANCE"], (s) => {
  const { order, orderCents } = subjectOf(s);
  const amountCents = s.amountCents!;
  const refunded = s.input.ledgerEntry?.refunded_cents ?? 0;
  const own = s.input.claimId === undefined ? 0 : (reservedForClaim(s.input.ledgerEntry, s.input.claimId) ?? 0);
  const refundedByOthers = refunded - own;
  const balance = orderCents - refundedByOthers;
  return amountCents <= balance
    ? PASSED
    : fail(
        "EXCEEDS_REFUNDABLE_BALANCE",
        `Amount ${formatEur(amountCents)} EUR exceeds the refundable balance of order ${order.order_id} (${formatEur(Math.max(balance, 0))} EUR: order ${formatEur(orderCents)} EUR, already refunded ${formatEur(refundedByOthers)} EUR)`,
      );
});

// ---- layer 8b — customer: an order bound to a customer is refunded only to that customer.

const customerMatch = check("customer_match", ["CUSTOMER_MISMATCH"], (s) => {
  const { order } = subjectOf(s);
  const { customer_id } = s.input.claim;
  return order.customer_id === undefined || customer_id === undefined || customer_id === order.customer_id
    ? PASSED
    : fail("CUSTOMER_MISMATCH", `Claim customer ${show(customer_id)} is not the customer of order ${order.order_id}`);
});

// ---- layer 9 — uncertainty: the agent asked for a human, proposes a replacement (no automatic executor), or is
// unsure.

const policyKindEscalation = check(
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

const confidence = check("confidence", ["LOW_CONFIDENCE"], (s) => {
  const { confidence: c } = proposalOf(s);
  const threshold = s.input.responsibility.escalate_on_uncertainty;
  return c >= threshold
    ? PASSED
    : fail("LOW_CONFIDENCE", `Confidence ${c} below escalate_on_uncertainty (${threshold}). Human approval required.`);
});

// ---- layer 9b — customer unknown: an order bound to a customer, a claim that names none.

const customerVerified = check("customer_verified", ["CUSTOMER_UNVERIFIED"], (s) => {
  const { order } = subjectOf(s);
  return order.customer_id === undefined || s.input.claim.customer_id !== undefined
    ? PASSED
    : fail(
        "CUSTOMER_UNVERIFIED",
        `Order ${order.order_id} belongs to a customer and the claim names none. Human review required.`,
      );
});

// ---- layer 10 — date sanity: an order bought after the claim was received is a data problem for a human.

const purchaseDateSanity = check("purchase_date_sanity", ["PURCHASE_DATE_IN_FUTURE"], (s) => {
  const { order, purchaseMs } = subjectOf(s);
  return purchaseMs <= s.receivedMs
    ? PASSED
    : fail(
        "PURCHASE_DATE_IN_FUTURE",
        `Order ${order.order_id} purchase date ${order.purchase_date} is after the claim was received (${s.input.receivedAt}). Human review required.`,
      );
});

// ---- layer 10b — open review: while another claim on the order awaits a person, the person sees this one too.

const openReview = check("open_review", ["REVIEW_PENDING_ON_ORDER"], (s) => {
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

const amountLimit = check("amount_limit", ["AMOUNT_ABOVE_LIMIT"], (s) => {
  const amountCents = s.amountCents!;
  const automatic = automaticRefundedCents(s.input.ledgerEntry, s.input.claimId);
  if (amountCents + automatic <= s.limitCents) return PASSED;
  const limit = formatEur(s.limitCents);
  return fail(
    "AMOUNT_ABOVE_LIMIT",
    automatic === 0
      ? `Amount ${formatEur(amountCents)} EUR exceeds max_refund_without_escalation (${limit} EUR). Human approval required.`
      : `Amount ${formatEur(amountCents)} EUR plus ${formatEur(automatic)} EUR already refunded automatically on order ${subjectOf(s).order.order_id} exceeds max_refund_without_escalation (${limit} EUR). Human approval required.`,
  );
});

// ---- layer 10c — person decided: once a person DENIED a claim on the order, or APPROVED one for less than it
// proposed, no later claim on the order is refunded without a person.

const priorDecision = check("prior_decision", ["PRIOR_DECISION_ON_ORDER"], (s) => {
  const bound = bindingDecisions(s.input.ledgerEntry, s.input.claimId);
  return bound.length === 0
    ? PASSED
    : fail(
        "PRIOR_DECISION_ON_ORDER",
        `On order ${subjectOf(s).order.order_id} ${bound.map(describeDecision).join("; ")}. Human review required.`,
      );
});

// ---- layer 10d — resubmitted: a claim a reviewer resubmitted is never refunded without a (second) person.

const resubmitted = check("resubmitted", ["RESUBMITTED_CLAIM"], (s) => {
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

const customerLimit = check("customer_limit", ["CUSTOMER_LIMIT_EXCEEDED"], (s) => {
  const { order } = subjectOf(s);
  if (s.customerLimits === undefined || order.customer_id === undefined) return SKIPPED;
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
    s.amountCents!,
    s.decidedMs,
    s.customerLimits,
    s.input.claimId,
  );
  return excess === undefined ? PASSED : fail("CUSTOMER_LIMIT_EXCEEDED", `${excess}. Human approval required.`);
});

/**
 * The kernel's layers in the order they run; the first failing check wins. Every REJECT check runs before any
 * ESCALATE check — except alignment (8): a proposal that does not answer its claim is a model failure, not a
 * customer outcome, so it runs right after the schema and escalates before the order is even looked up (a
 * garbled order id never becomes ORDER_NOT_FOUND). A reviewer's approval lifts the escalation layers 9–11b
 * (10c and 10d included) and nothing else.
 */
export const KERNEL_TABLE: readonly KernelLayer[] = [
  layer(1, "schema", [proposalSchema, idempotencyKey, proposalId, policyKind, agentRegistered, agentAuthorised]),
  layer(8, "alignment", [flowAlignment, orderAlignment, amountAlignment]),
  layer(2, "validity", [ttl]),
  layer(3, "order", [orderIdPresent, orderExists]),
  layer(4, "category", [categoryAllowed, categoryAuthorised]),
  layer(5, "window", [returnWindow]),
  layer(6, "amount", [amountValid]),
  layer(7, "balance", [refundableBalance]),
  layer(8.5, "customer", [customerMatch]),
  layer(9, "uncertainty", [policyKindEscalation, confidence], { liftedByApproval: true }),
  layer(9.5, "customer_unverified", [customerVerified], { liftedByApproval: true }),
  layer(10, "date_sanity", [purchaseDateSanity], { liftedByApproval: true }),
  layer(10.5, "open_review", [openReview], { liftedByApproval: true }),
  layer(10.6, "prior_decision", [priorDecision], { liftedByApproval: true }),
  layer(10.7, "resubmitted", [resubmitted], { liftedByApproval: true }),
  layer(11, "limit", [amountLimit], { liftedByApproval: true }),
  layer(11.5, "customer_limit", [customerLimit], { liftedByApproval: true }),
];

/** The layer ids in the order they run, then the pass row. */
export const EVALUATION_ORDER: readonly (KernelLayerId | typeof PASS_LAYER)[] = [
  ...KERNEL_TABLE.map((l) => l.layer),
  PASS_LAYER,
];

/**
 * Decides a refund proposal by running every layer of `KERNEL_TABLE`. Business outcomes are returned, never
 * thrown; a `KernelInputError` means the caller wired the kernel wrongly (bad timestamps or contract, another
 * order than the proposal names, a corrupt ledger entry).
 */
export function decideClaim(input: DecideClaimInput): ClaimVerdict {
  return runLayers(KERNEL_TABLE, kernelState(input));
}

/** What triage decides from: the claim itself (its order id, amount and customer), the order and its ledger entry. */
export type TriageInput = Pick<
  DecideClaimInput,
  "claim" | "contract" | "responsibility" | "order" | "ledgerEntry" | "receivedAt" | "decidedAt" | "claimId"
>;

/**
 * Layer 7 on the claim itself: any proposal that passes the self-check asks for a positive amount of at most the
 * claimed one, so the claim is decided here only when not even the least refund (one cent) fits the balance.
 */
const nothingLeftToRefund: KernelCheck = {
  name: refundableBalance.name,
  codes: refundableBalance.codes,
  run: (s) => (refundableBalance.run({ ...s, amountCents: 1 }).outcome === "fail" ? refundableBalance.run(s) : PASSED),
};

/** The kernel's layers triage runs on the claim itself: order (3), category (4), window (5), amount (6), balance (7), customer (8b). */
const TRIAGE_LAYERS: ReadonlySet<KernelLayerId> = new Set<KernelLayerId>([3, 4, 5, 6, 7, 8.5]);

/**
 * The rows of `KERNEL_TABLE` that decide a claim whatever a self-checked proposal would say (it names the claim's
 * order and at most its amount): every one of them can only REJECT. The balance row asks whether anything is left.
 */
export const TRIAGE_TABLE: readonly KernelLayer[] = KERNEL_TABLE.filter((row) => TRIAGE_LAYERS.has(row.layer)).map(
  (row) => (row.layer === 7 ? { ...row, checks: [nothingLeftToRefund] } : row),
);

/**
 * Triage (docs/kernel.md): runs `TRIAGE_TABLE` on the claim itself — its order id and claimed amount stand in for
 * a proposal's. Returns the REJECT verdict of the first failing check, or `undefined` when the claim can pass and
 * goes to the crew. Like `decideClaim`, a `KernelInputError` means bad wiring or corrupt order data.
 */
export function triageClaim(input: TriageInput): ClaimVerdict | undefined {
  const s = kernelState({ ...input, proposal: null, registry: { agents: {} } });
  s.orderId = input.claim.order_id;
  s.amountEur = input.claim.amount_eur;
  const verdict = runLayers(TRIAGE_TABLE, s);
  if (verdict.verdict === "ACCEPT") return undefined;
  // Rejected after the balance row while only part of the claim is left: a proposal above what is left would be
  // refused on the balance first, one within it on the later row, so the reason depends on the proposal: the crew.
  if (verdict.layer > 7 && refundableBalance.run(s).outcome === "fail") return undefined;
  return verdict;
}

/** The state the checks start from: the input with its times and contract checked (a wiring error throws). */
function kernelState(input: DecideClaimInput): KernelState {
  const decidedMs = kernelTime(input.decidedAt, "decidedAt");
  const receivedMs = kernelTime(input.receivedAt, "receivedAt");
  const limit = parseCents(input.contract.max_refund_without_escalation);
  if (!limit.ok || limit.cents <= 0)
    throw new KernelInputError(
      `contract.max_refund_without_escalation: ${limit.ok ? "must be positive" : limit.message}`,
    );
  const days = input.contract.return_window_days;
  if (!Number.isSafeInteger(days) || days <= 0)
    throw new KernelInputError(`contract.return_window_days must be a positive integer, got ${String(days)}`);
  let customerLimits: CustomerLimitsCents | undefined;
  try {
    customerLimits = input.contract.customer_limits ? customerLimitsCents(input.contract.customer_limits) : undefined;
  } catch (cause) {
    throw new KernelInputError(`contract.${(cause as Error).message}`, { cause });
  }
  return {
    input,
    decidedMs,
    receivedMs,
    limitCents: limit.cents,
    customerLimits,
    orderId: undefined,
    amountEur: undefined,
    envelope: undefined,
    policyKind: undefined,
    subject: undefined,
    amountCents: undefined,
  };
}

/**
 * Runs `layers` in order on `s`: each passed check is traced, the first failing one decides with its reason
 * code; when every check passes the verdict is ACCEPT. With an approval the layers it lifts do not run.
 */
function runLayers(layers: readonly KernelLayer[], s: KernelState): ClaimVerdict {
  const checks: VerdictCheck<ClaimReasonCode>[] = [];
  for (const row of layers) {
    if (row.liftedByApproval && s.input.approval) continue;
    for (const c of row.checks) {
      const result = c.run(s);
      if (result.outcome === "skip") continue;
      if (result.outcome === "fail") {
        const { layer: id, verdict } = REASON_CODES[result.code];
        checks.push({ layer: id, name: c.name, passed: false, reason_code: result.code });
        return { verdict, reason_code: result.code, reason: result.reason, layer: id, checks };
      }
      checks.push({ layer: row.layer, name: c.name, passed: true });
      if (result.learned) Object.assign(s, result.learned);
    }
  }
  return {
    verdict: "ACCEPT",
    reason_code: "VALIDATION_PASSED",
    reason: s.input.approval ? "Reject checks passed; escalation lifted by a reviewer's approval" : "Validation passed",
    layer: PASS_LAYER,
    checks,
  };
}

function kernelTime(value: string, what: string): number {
  const ms = typeof value === "string" ? parseIsoMs(value) : undefined;
  if (ms === undefined) throw new KernelInputError(`${what} must be an ISO-8601 timestamp, got ${show(value)}`);
  return ms;
}

/** Quotes an untrusted value for a human reason, cut to a readable length. */
function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return `'${text.length > 80 ? `${text.slice(0, 80)}…` : text}'`;
}
