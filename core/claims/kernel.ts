// The claims kernel: a pure function from (proposal, claim, contracts, registry, order, ledger, times) to a verdict.
import { canonicalizeStable } from "../crew/canonical.ts";
import type { Sha256Hex } from "../crew/hash.ts";
import type { ClaimsContract, Order, ResponsibilityContract } from "../integrity/contracts.ts";
import { KernelInputError } from "../integrity/errors.ts";
import {
  assertLedgerEntry,
  automaticRefundedCents,
  otherPendingReviews,
  reservedForClaim,
  type LedgerEntry,
} from "../integrity/ledger.ts";
import { formatEur, parseCents } from "../integrity/money.ts";
import { computeIdempotencyKey, ProposalEnvelopeSchema, proposalIdFor } from "../integrity/proposal.ts";
import { findRegisteredAgent, type RegistryView } from "../integrity/registry.ts";
import { DAY_MS, formatDuration, parseIsoMs } from "../integrity/time.ts";
import { PASS_LAYER, type Verdict, type VerdictCheck } from "../integrity/verdict.ts";
import type { Claim } from "./claim.ts";
import { PolicyKindSchema } from "./proposal-output.ts";
import { REASON_CODES, type ClaimReasonCode } from "./reason-codes.ts";

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
  /** When the claim was received (ISO); the return window counts back from here. */
  receivedAt: string;
  /** When the kernel sees the proposal (ISO); the validity window counts up to here. */
  decidedAt: string;
  /** The claim's id: its own reservation on the ledger is not counted against it, so a replay after execution decides the same. */
  claimId?: string;
  /** The claim's decision flow id: when given, a proposal of another flow is `PROPOSAL_MISMATCH`. */
  dfid?: string;
  /**
   * A reviewer approves (SPEC §4.6): the escalation checks (layers 9–11) are lifted and nothing else; the
   * reject checks run again against the ledger as it stands.
   */
  approval?: { amountEur?: number };
  /** How to compute the SHA-256 the idempotency key check needs (any implementation decides the same); default the pure one of core/crew/hash.ts. */
  sha256?: Sha256Hex;
};

/**
 * Decides a refund proposal. Layers run in SPEC §4.2 order and the first failing check wins, so every
 * REJECT check runs before any ESCALATE check — except alignment (layer 8): a proposal that does not answer
 * its claim is a model failure, not a customer outcome, so it is checked right after the schema and
 * escalates before the order is even looked up (a garbled order id never becomes ORDER_NOT_FOUND).
 * Business outcomes are returned, never thrown; a `KernelInputError` means the caller wired the kernel
 * wrongly (bad timestamps, another order than the proposal names, a corrupt ledger entry).
 */
export function decideClaim(input: DecideClaimInput): ClaimVerdict {
  const { claim, contract, responsibility, registry, order, ledgerEntry } = input;
  const decidedMs = kernelTime(input.decidedAt, "decidedAt");
  const receivedMs = kernelTime(input.receivedAt, "receivedAt");
  const limitCents = parseCents(contract.max_refund_without_escalation);
  if (!limitCents.ok || limitCents.cents <= 0)
    throw new KernelInputError(
      `contract.max_refund_without_escalation: ${limitCents.ok ? "must be positive" : limitCents.message}`,
    );
  if (!Number.isSafeInteger(contract.return_window_days) || contract.return_window_days <= 0) {
    throw new KernelInputError(
      `contract.return_window_days must be a positive integer, got ${String(contract.return_window_days)}`,
    );
  }

  const checks: VerdictCheck<ClaimReasonCode>[] = [];
  const pass = (name: string, code: ClaimReasonCode) =>
    void checks.push({ layer: REASON_CODES[code].layer, name, passed: true });
  const fail = (name: string, code: ClaimReasonCode, reason: string): ClaimVerdict => {
    const { layer, verdict } = REASON_CODES[code];
    checks.push({ layer, name, passed: false, reason_code: code });
    return { verdict, reason_code: code, reason, layer, checks };
  };

  // Layer 1 — schema: the proposal parses, is intact, its kind is allowed, its agent registered and authorised.
  const parsed = ProposalEnvelopeSchema.safeParse(input.proposal);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
    return fail("proposal_schema", "SCHEMA_INVALID", `Proposal does not parse: ${issues.join("; ")}`);
  }
  const p = parsed.data;
  const createdMs = parseIsoMs(p.created_at);
  if (createdMs === undefined)
    return fail(
      "proposal_schema",
      "SCHEMA_INVALID",
      `Proposal does not parse: created_at: ${show(p.created_at)} is not a real date`,
    );
  pass("proposal_schema", "SCHEMA_INVALID");
  if (computeIdempotencyKey(p, input.sha256) !== p.idempotency_key) {
    return fail(
      "idempotency_key",
      "IDEMPOTENCY_KEY_MISMATCH",
      "Proposal idempotency_key does not match its content (SHA-256 of the DFID and the canonical proposal)",
    );
  }
  pass("idempotency_key", "IDEMPOTENCY_KEY_MISMATCH");
  if (p.proposal_id !== proposalIdFor(p.idempotency_key)) {
    return fail(
      "proposal_id",
      "PROPOSAL_ID_MISMATCH",
      `Proposal id ${show(p.proposal_id)} is not derived from its idempotency_key`,
    );
  }
  pass("proposal_id", "PROPOSAL_ID_MISMATCH");
  if (p.policy_kind === undefined || p.policy_kind === null || p.policy_kind === "") {
    return fail("policy_kind", "POLICY_KIND_MISSING", "Proposal has no policy kind");
  }
  const kind = PolicyKindSchema.safeParse(p.policy_kind);
  if (!kind.success) {
    return fail(
      "policy_kind",
      "POLICY_KIND_UNKNOWN",
      `Policy kind ${show(p.policy_kind)} is not one of ${PolicyKindSchema.options.join(", ")}`,
    );
  }
  const policyKind = kind.data;
  if (!responsibility.allowed_policy_types.includes(policyKind)) {
    return fail(
      "policy_kind",
      "POLICY_KIND_NOT_ALLOWED",
      `Policy kind '${policyKind}' not in allowed_policy_types [${responsibility.allowed_policy_types.join(", ")}] of agent ${responsibility.agent_id}`,
    );
  }
  pass("policy_kind", "POLICY_KIND_NOT_ALLOWED");
  const agent = findRegisteredAgent(registry, p.agent_id);
  if (!agent) return fail("agent_registered", "AGENT_NOT_REGISTERED", `Agent ${show(p.agent_id)} is not registered`);
  pass("agent_registered", "AGENT_NOT_REGISTERED");
  const unauthorised =
    agent.status !== "ACTIVE"
      ? "its registration was revoked"
      : p.agent_id !== responsibility.agent_id
        ? `the kernel enforces the contract of agent ${responsibility.agent_id}`
        : canonicalizeStable(agent.contract) !== canonicalizeStable(responsibility)
          ? "its registered contract differs from the contract the kernel enforces"
          : undefined;
  if (unauthorised)
    return fail(
      "agent_authorised",
      "AGENT_NOT_AUTHORISED",
      `Agent ${show(p.agent_id)} is not authorised: ${unauthorised}`,
    );
  pass("agent_authorised", "AGENT_NOT_AUTHORISED");

  // Layer 8 — alignment (run right after layer 1): the proposal answers this claim — same flow, same order,
  // no more than claimed, and a positive amount when the claim's is.
  const orderId = p.params.order_id;
  if (input.dfid !== undefined && p.dfid !== input.dfid) {
    return fail(
      "flow_alignment",
      "PROPOSAL_MISMATCH",
      `Proposal belongs to decision flow ${show(p.dfid)}, not ${input.dfid}`,
    );
  }
  if (input.dfid !== undefined) pass("flow_alignment", "PROPOSAL_MISMATCH");
  if (orderId !== claim.order_id) {
    return fail(
      "order_alignment",
      "PROPOSAL_MISMATCH",
      `Proposal order ${show(orderId)} differs from the claim's order ${show(claim.order_id)}`,
    );
  }
  pass("order_alignment", "PROPOSAL_MISMATCH");
  const claimed = parseCents(claim.amount_eur);
  const proposed = parseCents(p.params.amount_eur);
  const claimedText = claimed.ok ? formatEur(claimed.cents) : String(claim.amount_eur);
  if (proposed.ok && (claimed.ok ? proposed.cents > claimed.cents : proposed.cents / 100 > claim.amount_eur)) {
    return fail(
      "amount_alignment",
      "PROPOSAL_MISMATCH",
      `Proposal amount ${formatEur(proposed.cents)} EUR exceeds the claimed amount ${claimedText} EUR`,
    );
  }
  if (claim.amount_eur > 0 && (!proposed.ok || proposed.cents <= 0)) {
    return fail(
      "amount_alignment",
      "PROPOSAL_MISMATCH",
      `Proposal amount ${show(p.params.amount_eur)} is not a positive amount for a claim of ${claimedText} EUR`,
    );
  }
  pass("amount_alignment", "PROPOSAL_MISMATCH");

  // Layer 2 — validity: the proposal is not older than its validity window when the kernel sees it (exactly at it passes).
  const ageMs = decidedMs - createdMs;
  if (ageMs > p.valid_for_ms) {
    return fail(
      "ttl",
      "TTL_EXPIRED",
      `Proposal expired: created ${p.created_at}, seen ${input.decidedAt}, ${ageMs} ms old, valid for ${p.valid_for_ms} ms`,
    );
  }
  pass("ttl", "TTL_EXPIRED");

  // Layer 3 — order: the proposal names an order and the context store knows it.
  if (typeof orderId !== "string" || orderId.trim() === "")
    return fail("order_id_present", "ORDER_ID_MISSING", "Proposal has no order id");
  pass("order_id_present", "ORDER_ID_MISSING");
  if (!order) return fail("order_exists", "ORDER_NOT_FOUND", `Order ${show(orderId)} not found in the context store`);
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
  pass("order_exists", "ORDER_NOT_FOUND");

  // Layer 4 — category: the ORDER's category (never the claim's) is refundable, and this agent may refund it.
  if (!contract.allowed_refund_categories.includes(order.category)) {
    return fail(
      "category_allowed",
      "CATEGORY_NOT_ALLOWED",
      `Category '${order.category}' not in allowed_refund_categories [${contract.allowed_refund_categories.join(", ")}]`,
    );
  }
  pass("category_allowed", "CATEGORY_NOT_ALLOWED");
  if (
    responsibility.authorized_categories.length > 0 &&
    !responsibility.authorized_categories.includes(order.category)
  ) {
    return fail(
      "category_authorised",
      "CATEGORY_NOT_AUTHORISED",
      `Category '${order.category}' not in the authorised categories [${responsibility.authorized_categories.join(", ")}] of agent ${responsibility.agent_id}`,
    );
  }
  pass("category_authorised", "CATEGORY_NOT_AUTHORISED");

  // Layer 5 — window: the order's purchase is at most return_window_days × 24 h before the claim's receipt.
  const elapsedMs = receivedMs - purchaseMs;
  if (elapsedMs > contract.return_window_days * DAY_MS) {
    return fail(
      "return_window",
      "OUTSIDE_RETURN_WINDOW",
      `Order ${order.order_id} outside return window (purchased ${order.purchase_date}, ${formatDuration(elapsedMs)} before the claim was received; return_window_days: ${contract.return_window_days})`,
    );
  }
  pass("return_window", "OUTSIDE_RETURN_WINDOW");

  // Layer 6 — amount: a positive JSON number exact to the cent.
  // An approval may grant less than proposed (never more: the review service checks); the reject checks judge that amount.
  const amount = parseCents(input.approval?.amountEur ?? p.params.amount_eur);
  if (!amount.ok) return fail("amount_valid", "INVALID_AMOUNT", `Invalid refund amount: ${amount.message}`);
  if (amount.cents <= 0)
    return fail(
      "amount_valid",
      "INVALID_AMOUNT",
      `Invalid refund amount: ${formatEur(amount.cents)} EUR is not positive`,
    );
  pass("amount_valid", "INVALID_AMOUNT");
  const amountCents = amount.cents;

  // Layer 7 — balance: the amount fits in what is left of the order after other claims' refunds.
  const refunded = ledgerEntry?.refunded_cents ?? 0;
  const own = input.claimId === undefined ? 0 : (reservedForClaim(ledgerEntry, input.claimId) ?? 0);
  const refundedByOthers = refunded - own;
  const balance = orderCents.cents - refundedByOthers;
  if (amountCents > balance) {
    return fail(
      "refundable_balance",
      "EXCEEDS_REFUNDABLE_BALANCE",
      `Amount ${formatEur(amountCents)} EUR exceeds the refundable balance of order ${order.order_id} (${formatEur(Math.max(balance, 0))} EUR: order ${formatEur(orderCents.cents)} EUR, already refunded ${formatEur(refundedByOthers)} EUR)`,
    );
  }
  pass("refundable_balance", "EXCEEDS_REFUNDABLE_BALANCE");

  // Layer 8b — customer: an order bound to a customer is refunded only to that customer.
  if (order.customer_id !== undefined && claim.customer_id !== undefined && claim.customer_id !== order.customer_id) {
    return fail(
      "customer_match",
      "CUSTOMER_MISMATCH",
      `Claim customer ${show(claim.customer_id)} is not the customer of order ${order.order_id}`,
    );
  }
  pass("customer_match", "CUSTOMER_MISMATCH");

  // A reviewer's approval lifts the escalation checks (layers 9–11) and nothing else.
  if (input.approval)
    return {
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
      reason: "Reject checks passed; escalation lifted by a reviewer's approval",
      layer: PASS_LAYER,
      checks,
    };

  // Layer 9 — uncertainty: the agent asked for a human, proposes a replacement (no automatic executor), or is unsure.
  if (policyKind === "ESCALATE") {
    return fail(
      "policy_kind_escalation",
      "AGENT_REQUESTED_ESCALATION",
      `Agent ${p.agent_id} requested escalation. Human approval required.`,
    );
  }
  if (policyKind === "REPLACE") {
    return fail(
      "policy_kind_escalation",
      "REPLACEMENT_REQUIRES_REVIEW",
      `Replacement for order ${order.order_id} has no automatic executor. Human approval required.`,
    );
  }
  pass("policy_kind_escalation", "AGENT_REQUESTED_ESCALATION");
  if (p.confidence < responsibility.escalate_on_uncertainty) {
    return fail(
      "confidence",
      "LOW_CONFIDENCE",
      `Confidence ${p.confidence} below escalate_on_uncertainty (${responsibility.escalate_on_uncertainty}). Human approval required.`,
    );
  }
  pass("confidence", "LOW_CONFIDENCE");

  // Layer 9b — customer unknown: an order bound to a customer, a claim that names none.
  if (order.customer_id !== undefined && claim.customer_id === undefined) {
    return fail(
      "customer_verified",
      "CUSTOMER_UNVERIFIED",
      `Order ${order.order_id} belongs to a customer and the claim names none. Human review required.`,
    );
  }
  pass("customer_verified", "CUSTOMER_UNVERIFIED");

  // Layer 10 — date sanity: an order bought after the claim was received is a data problem for a human.
  if (purchaseMs > receivedMs) {
    return fail(
      "purchase_date_sanity",
      "PURCHASE_DATE_IN_FUTURE",
      `Order ${order.order_id} purchase date ${order.purchase_date} is after the claim was received (${input.receivedAt}). Human review required.`,
    );
  }
  pass("purchase_date_sanity", "PURCHASE_DATE_IN_FUTURE");

  // Layer 10b — open review: while another claim on the order awaits a person, the person sees this one too.
  const pending = otherPendingReviews(ledgerEntry, input.claimId);
  if (pending.length > 0) {
    return fail(
      "open_review",
      "REVIEW_PENDING_ON_ORDER",
      `Another claim on order ${order.order_id} awaits human review (${pending.join(", ")}). Human review required.`,
    );
  }
  pass("open_review", "REVIEW_PENDING_ON_ORDER");

  // Layer 11 — limit: the amount plus what was already refunded automatically on the order must stay within
  // max_refund_without_escalation (exactly the limit passes), so splitting a claim never gets around a human.
  const automatic = automaticRefundedCents(ledgerEntry, input.claimId);
  if (amountCents + automatic > limitCents.cents) {
    return fail(
      "amount_limit",
      "AMOUNT_ABOVE_LIMIT",
      automatic === 0
        ? `Amount ${formatEur(amountCents)} EUR exceeds max_refund_without_escalation (${formatEur(limitCents.cents)} EUR). Human approval required.`
        : `Amount ${formatEur(amountCents)} EUR plus ${formatEur(automatic)} EUR already refunded automatically on order ${order.order_id} exceeds max_refund_without_escalation (${formatEur(limitCents.cents)} EUR). Human approval required.`,
    );
  }
  pass("amount_limit", "AMOUNT_ABOVE_LIMIT");

  return {
    verdict: "ACCEPT",
    reason_code: "VALIDATION_PASSED",
    reason: "Validation passed",
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
