// The kernel's decision, apart from its I/O: from the stored claim, the proposal, the order and its ledger entry
// at an instant to the verdict record, its events, its audit and the review an ESCALATE opens; what a refund
// reservation's answer settles; and the effects that end a claim the order source or its data failed. The kernel's
// decider (decide/kernel.ts) and triage's are built from these.
import { notReservedText, type CustomerWindow, type LedgerEntry, type ReserveResult } from "../../core/kernel/index.ts";
import { canonicalize } from "../../core/crew/index.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type {
  BusEntry,
  ClaimVerdictDetail,
  ClaimVerdictEvent,
  RefundExecutedDetail,
} from "../../core/kernel/events.ts";
import { money } from "../../core/kernel/money.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { proposalOutputOf } from "../../core/claim/proposal-output.ts";
import { buildVerdictRecord, executionIdFor, planExecution } from "../../core/kernel/execution.ts";
import { claimAsProposed } from "../../core/kernel/claim-lines.ts";
import { decideClaim } from "../../core/kernel/kernel.ts";
import { claimVerdictEvent } from "../../core/kernel/public-verdict.ts";
import { amountFields, currencyFor, withoutAmountEur } from "../../core/kernel/public-amount.ts";
import { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { ClaimVerdict } from "../../core/kernel/kernel.ts";
import { decideShadow } from "../../core/kernel/shadow.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import { severityForVerdict } from "../../core/integrity/index.ts";
import type { AuditEvent, Order } from "../../core/integrity/index.ts";
import { claimAudit } from "./audit.ts";
import { plannedReturn, returnRequestedDetail } from "../../core/kernel/returns.ts";
import { creditFields, exchangeLines, outcomeOfClaim } from "../../core/kernel/outcomes.ts";
import { returnAudit } from "./returns.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { StoredVerdict, VerdictOutcome } from "../ports.ts";
import { needsReview, reviewFor, reviewRequested } from "./needs-review.ts";

/** What the kernel decides with beyond the claim: the agent's contracts, the registry, the hash to key with. */
type KernelPolicy = Pick<PipelineDeps, "agent" | "registry" | "sha256">;

/** A decision of the kernel with everything stored beside it: the record, the events, the audit, the review it opens. */
export type Decision = {
  verdict: ClaimVerdict;
  record: ClaimVerdictDetail;
  events: BusEntry[];
  audit: AuditEvent[];
  review?: ReviewRecord;
};

/** The instant and the authoritative data a decision is made against. */
interface DecisionInputs {
  order: Order | undefined;
  /** Who had no such order, when it was the shop's order API (the verdict's reason says so). */
  orderAbsentFrom?: "shop_api";
  ledgerEntry: LedgerEntry | undefined;
  /** The window of the order's customer, when the contract has customer limits and the order a customer. */
  customerWindow?: CustomerWindow | undefined;
  decidedAt: string;
  now: number;
  /** How many reservation races this decision follows. */
  lostRaces?: number;
}

/** Reads the proposal's order id without trusting its shape. */
export function proposedOrderId(proposal: unknown): string | undefined {
  const params = (proposal as { params?: { order_id?: unknown } } | null)?.params;
  return typeof params?.order_id === "string" && params.order_id.length > 0 ? params.order_id : undefined;
}

/** Decides on the stored claim against the given order and ledger entry, at `decidedAt`. */
export function decideProposal(
  record: ClaimRecord,
  proposal: unknown,
  at: DecisionInputs,
  policy: KernelPolicy,
): Decision {
  const inputs = {
    proposal,
    claim: record.claim!,
    contract: policy.agent.contract,
    responsibility: policy.agent.responsibility,
    registry: { agents: policy.registry.agents },
    order: at.order,
    ...(at.orderAbsentFrom ? { orderAbsentFrom: at.orderAbsentFrom } : {}),
    ledgerEntry: at.ledgerEntry,
    ...(at.customerWindow ? { customerWindow: at.customerWindow } : {}),
    ...(record.parent_claim_id ? { parentClaimId: record.parent_claim_id } : {}),
    receivedAt: record.received_at,
    decidedAt: at.decidedAt,
    claimId: record.claim_id,
    dfid: record.dfid,
  };
  // The hash is how to compute, not what is decided: it stays out of the recorded kernel inputs.
  const kernelInput = policy.sha256 ? { ...inputs, sha256: policy.sha256 } : inputs;
  const verdict = decideClaim(kernelInput);
  // The shadow policy decides the same inputs beside the live one; only the audit records it.
  const { shadow: shadowPolicy } = policy.agent;
  const shadow = shadowPolicy
    ? decideShadow(kernelInput, verdict, {
        agent_id: shadowPolicy.agentId,
        version: shadowPolicy.version,
        contract: shadowPolicy.contract,
        responsibility: shadowPolicy.responsibility,
      })
    : undefined;
  const verdictRecord = buildVerdictRecord({
    verdict,
    policy: policy.agent,
    proposal,
    claimId: record.claim_id,
    dfid: record.dfid,
    decidedAt: at.decidedAt,
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
    ...(policy.sha256 ? { sha256: policy.sha256 } : {}),
  });
  const audit = [
    // lost_races: how many reservation races this decision follows (each noted as CLAIM_REFUND_NOT_EXECUTED), so replay can count them.
    claimAudit(record, "PROPOSAL_SUBMITTED", "RUNNING", at.now, {
      kernel_inputs: JSON.parse(
        canonicalize({ ...inputs, order: at.order ?? null, ledgerEntry: at.ledgerEntry ?? null }),
      ),
      ...(at.lostRaces ? { lost_races: at.lostRaces } : {}),
    }),
    claimAudit(
      record,
      "KERNEL_VERDICT",
      "DECIDED",
      at.now,
      { ...verdictRecord, layer: verdict.layer, checks: verdict.checks, ...(shadow ? { shadow } : {}) },
      severityForVerdict(verdict.verdict),
    ),
  ];
  const event = claimVerdictEvent(verdictRecord, {
    order: at.order,
    // A proposal that named lines was decided on them: the verdict lists them (core/kernel/claim-lines.ts).
    claim: record.claim && claimAsProposed(record.claim, proposal),
    contract: policy.agent.contract,
    responsibility: policy.agent.responsibility,
    receivedAt: record.received_at,
  });
  const events: BusEntry[] = [busEntry("ClaimVerdict", event)];
  if (verdict.verdict !== "ESCALATE") return { verdict, record: verdictRecord, events, audit };
  const review = reviewFor(record, {
    origin: "ESCALATE",
    reasonCode: verdict.reason_code,
    reason: verdict.reason,
    now: at.now,
    orderId: verdictRecord.order_id ?? record.claim?.order_id,
    amountEur: verdictRecord.amount_eur ?? undefined,
    currency: currencyFor(at.order, record.claim?.currency),
    verdictId: verdictRecord.verdict_id,
    verdictDecidedAt: at.decidedAt,
    proposal,
  });
  const requested = reviewRequested(record, review);
  return {
    verdict,
    record: verdictRecord,
    events: [...events, requested.event],
    audit: [...audit, requested.audit],
    review,
  };
}

/** The decision as stored once under the proposal's idempotency key: not yet executed (an ACCEPT) nor published. */
export function verdictToStore(key: string, claimId: string, decision: Decision): StoredVerdict {
  return {
    idempotency_key: key,
    claim_id: claimId,
    record: decision.record,
    layer: decision.verdict.layer,
    checks: decision.verdict.checks,
    execution: decision.verdict.verdict === "ACCEPT" ? "PENDING" : "NOT_APPLICABLE",
    ...(decision.review ? { review: decision.review } : {}),
    events: decision.events,
    audit: decision.audit,
    published: false,
  };
}

/** The refund a PENDING verdict reserves, or `undefined` when it plans none (a verdict contradicting itself). */
export function plannedRefund(
  current: StoredVerdict,
  proposal: unknown,
  claimId: string,
): { order_id: string; amount_cents: number; amount_eur: number } | undefined {
  const verdictView = {
    verdict: current.record.verdict,
    reason_code: current.record.reason_code,
    reason: current.record.reason,
    layer: current.layer,
    checks: current.checks,
  } as ClaimVerdict;
  // The amount counts the order's currency, as the verdict's event says (a verdict stored before it: EUR).
  const event = current.events.find((e) => e.detailType === "ClaimVerdict")?.detail as ClaimVerdictEvent | undefined;
  const currency = event?.amount?.currency ?? "EUR";
  const [effect] = planExecution(verdictView, proposal, claimId, currency).filter((e) => e.type === "refund.reserve");
  return effect && effect.type === "refund.reserve" ? effect : undefined;
}

/** Where an execution stands after one reservation: settled (what to record), or decided again and still an ACCEPT. */
type ReservationStep = { settled: VerdictOutcome } | { again: StoredVerdict; raced: AuditEvent[] };

/**
 * What the ledger's answer to a reservation settles. Reserved (or found reserved by this claim for the same
 * amount: a repeat): EXECUTED with its RefundExecuted. Held by another proposal of the claim: REFUSED,
 * announcing nothing. Lost a race for the balance, the automatic limit or against a review opened on the
 * order: the kernel decides again (same decision instant) against the entry the ledger returned; a decision
 * other than ACCEPT replaces the unpublished one, an ACCEPT tries to reserve again.
 */
export function afterReservation(
  s: {
    current: StoredVerdict;
    raced: readonly AuditEvent[];
    record: ClaimRecord;
    proposal: unknown;
    refund: { order_id: string; amount_cents: number; amount_eur: number };
    order: Order;
    result: ReserveResult;
    /** The customer's window as it stands after this attempt (a refusal on it, or the window the kernel reserved on). */
    customerWindow?: CustomerWindow | undefined;
    now: number;
  },
  policy: KernelPolicy,
): ReservationStep {
  const { current, record, refund, result, now } = s;
  const scope = record.simulation_id;
  const mine =
    !result.ok &&
    result.code === "ALREADY_REFUNDED_FOR_CLAIM" &&
    result.entry.claims[record.claim_id] === refund.amount_cents;
  if (result.ok || mine) {
    const detail = {
      execution_id: executionIdFor(current.record.verdict_id),
      claim_id: record.claim_id,
      dfid: record.dfid,
      order_id: refund.order_id,
      amount_eur: refund.amount_eur,
      verdict_id: current.record.verdict_id,
      ...(scope ? { simulation_id: scope } : {}),
    };
    // What the ACCEPT gives (docs/returns.md#outcomes): money back, store credit (the same reservation, credited with
    // its bonus) or an exchange (the reservation holds the line, ExchangeRequested tells the shop, nothing is paid).
    const outcome = record.claim
      ? outcomeOfClaim(policy.agent.contract, s.order, record.claim, refund.amount_cents, currencyFor(s.order))
      : ({ outcome: "REFUND" } as const);
    Object.assign(detail, creditFields(outcome));
    const exchange = outcome.outcome === "EXCHANGE" && record.claim ? exchangeLines(s.order, record.claim) : undefined;
    // A return-required ACCEPT (docs/returns.md) announces the return instead: its RefundExecuted waits for pay_on.
    const planned =
      record.claim && !exchange
        ? plannedReturn(policy.agent.contract, s.order, record.claim, refund.amount_cents)
        : undefined;
    const asked = planned
      ? returnRequestedDetail(detail, planned, current.record.decided_at, new Date(now).toISOString())
      : undefined;
    const audit = [
      ...(current.audit ?? []),
      ...s.raced,
      claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", now, {
        ...detail,
        amount_cents: refund.amount_cents,
        ledger_after: result.entry,
        ...(exchange ? { exchange: true as const } : {}),
      }),
      ...(asked ? [returnAudit(record, "RETURN_REQUESTED", "AWAITING_RETURN", now, asked)] : []),
    ];
    return {
      settled: {
        execution: "EXECUTED",
        events: [
          ...current.events,
          exchange
            ? busEntry("ExchangeRequested", {
                ...withoutAmountEur({ ...detail, lines: exchange, requested_at: new Date(now).toISOString() }),
                ...amountFields(money(refund.amount_cents, currencyFor(s.order))),
              })
            : asked
              ? busEntry("ReturnRequested", {
                  ...withoutAmountEur(asked),
                  ...amountFields(money(refund.amount_cents, currencyFor(s.order))),
                })
              : busEntry("RefundExecuted", refundExecutedEvent(detail, refund.amount_cents, s.order)),
        ],
        audit,
        record: current.record,
        layer: current.layer,
        checks: current.checks,
      },
    };
  }
  if (result.code === "ALREADY_REFUNDED_FOR_CLAIM") {
    // Another proposal of this claim holds its refund: this one is superseded and announces nothing.
    const note = claimAudit(
      record,
      "CLAIM_REFUND_NOT_EXECUTED",
      "DECIDED",
      now,
      { verdict_id: current.record.verdict_id, code: result.code, reason: result.message },
      "WARN",
    );
    return { settled: { execution: "REFUSED", events: [], audit: [note] } };
  }
  const raced = [
    ...s.raced,
    claimAudit(
      record,
      "CLAIM_REFUND_NOT_EXECUTED",
      "RUNNING",
      now,
      {
        verdict_id: current.record.verdict_id,
        code: result.code,
        reason: `${notReservedText(money(refund.amount_cents, currencyFor(s.order)))}: ${result.message}; decided again against the ledger as it stands`,
      },
      "WARN",
    ),
  ];
  const decision = decideProposal(
    record,
    s.proposal,
    {
      order: s.order,
      ledgerEntry: result.entry,
      customerWindow: s.customerWindow,
      decidedAt: current.record.decided_at,
      now,
      lostRaces: raced.length,
    },
    policy,
  );
  if (decision.verdict.verdict !== "ACCEPT") {
    return {
      settled: {
        execution: "NOT_APPLICABLE",
        record: decision.record,
        layer: decision.verdict.layer,
        checks: decision.verdict.checks,
        events: decision.events,
        audit: [...raced, ...decision.audit],
        ...(decision.review ? { review: decision.review } : {}),
      },
    };
  }
  return {
    again: {
      ...current,
      record: decision.record,
      layer: decision.verdict.layer,
      checks: decision.verdict.checks,
      events: decision.events,
      audit: decision.audit,
      ...(decision.review ? { review: decision.review } : {}),
    },
    raced,
  };
}

/** An escalation a reviewer approved before the claim was recorded DECIDED: the approval is the claim's refund. */
export function approvedEscalationEffects(claimId: string): Effect[] {
  return [{ kind: "claim_update", claimId, patch: { executed: true }, onlyFrom: ["DECIDED"] }];
}

/**
 * Corrupt order data is a data problem for a person: the claim ends in NEEDS_REVIEW (keeping the proposal it was
 * decided on) and a review opens.
 */
export function orderDataInvalid(record: ClaimRecord, message: string, now: number, proposal?: unknown): Effect[] {
  return needsReview(
    record,
    now,
    "ORDER_DATA_INVALID",
    `The order data could not be used: ${message}`,
    {},
    undefined,
    proposalOutputOf(proposal),
  );
}

/**
 * An order source that stayed unavailable past the claim's wait (or the proposal queue's last receive): a person
 * decides, with what failed last; the customer gets no verdict built on facts the shop did not give.
 */
export function orderSourceUnavailable(
  record: ClaimRecord,
  message: string,
  waitedMs: number,
  now: number,
  proposal?: unknown,
): Effect[] {
  const reason = `The shop's orders could not be read for ${Math.round(waitedMs / 1000)} s; a person decides. Last error: ${message}`;
  return needsReview(
    record,
    now,
    ORDER_SOURCE_UNAVAILABLE,
    reason,
    { waited_ms: waitedMs, detail: message },
    undefined,
    proposalOutputOf(proposal),
  );
}

/** When the proposal was created (ms), if it says: the claim's wait for an unavailable order source counts from it. */
export function proposalCreatedMs(proposal: unknown): number | undefined {
  const at = (proposal as { created_at?: unknown } | null)?.created_at;
  const ms = typeof at === "string" ? Date.parse(at) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The `RefundExecuted` of a reservation as the bus carries it: the audit's detail with the amount in the order's
 * currency (`amount`; `amount_eur` kept only for EUR). The audit keeps the detail as recorded before currencies.
 */
function refundExecutedEvent(detail: RefundExecutedDetail, minor: number, order: Order): RefundExecutedDetail {
  const { amount_eur: _recorded, ...rest } = detail;
  return { ...rest, ...amountFields(money(minor, currencyFor(order))) };
}
