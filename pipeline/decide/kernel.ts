// The kernel's process, decided (docs/kernel.md): one proposal message, from the stored claim to the verdict
// published and the claim recorded DECIDED, as one `decideKernel(state, observation) → { effects, next }` the shell
// (pipeline/kernel-service.ts) loops over. Each step asks for one read or write whose answer the next decision needs
// (the stored verdict, the order, a reservation's outcome, the claim's update), in the order that makes a crash safe:
//   1. the claim must exist, belong to the message's decision flow and await a decision (RUNNING);
//   2. the decision is stored once per key (conditional put), not yet published;
//   3. an ACCEPT reserves its refund with one conditional update (automatic: bounded per order by the escalation
//      limit, refused while another claim on the order awaits review), on the customer's window first when the
//      contract has customer limits; if the reservation loses a race, the kernel decides again against the ledger it
//      now sees, and that decision replaces the unpublished one — so every ClaimVerdict ACCEPT has exactly one
//      RefundExecuted and the reverse;
//   4. the verdict is published and the claim recorded DECIDED (decide/publication.ts); an escalation a reviewer
//      approved meanwhile is the claim's refund.
// Corrupt order data ends the claim in NEEDS_REVIEW ORDER_DATA_INVALID instead of a kernel that throws forever. An
// order source that cannot answer is an outage, not a customer outcome: the message is retried until the claim has
// waited `orderSourceWaitMs`, then the claim ends NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE (docs/orders.md).
import { emptyLedgerEntry, parseCents } from "../../core/kernel/index.ts";
import { parseMoney } from "../../core/kernel/money.ts";
import { readOrder } from "../../core/kernel/order-view.ts";
import { currencyFor } from "../../core/kernel/public-amount.ts";
import { currencyPolicy, refundableOf } from "../../core/kernel/policy.ts";
import { claimAsProposed, lineReserveOf } from "../../core/kernel/claim-lines.ts";
import type { CustomerWindow, LedgerEntry, ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { idempotencyKeyOf, KernelInputError, OrderDataError } from "../../core/integrity/index.ts";
import type { Order } from "../../core/integrity/index.ts";
import type { ProposalMessage } from "../messages.ts";
import type { CustomerReserveRequest, ReserveRequest, StoredVerdict } from "../ports.ts";
import {
  afterReservation,
  approvedEscalationEffects,
  decideProposal,
  orderDataInvalid,
  orderSourceUnavailable,
  plannedRefund,
  proposalCreatedMs,
  proposedOrderId,
  verdictToStore,
} from "./kernel-decision.ts";
import type {
  Claimed,
  Delivered,
  KernelNext,
  KernelOutcome,
  KernelPolicy,
  KernelState,
  Reserving,
  Round,
  Settling,
} from "./kernel-protocol.ts";
import { decidePublication, startPublication } from "./publication.ts";
import type { PublicationNext, PublicationState } from "./publication.ts";
import type { Observation, Request } from "./requests.ts";
import { observedAs, within } from "./step.ts";
import type { Step } from "./step.ts";

/** How long a claim waits for an order source that cannot answer, unless the settings say otherwise. */
export const DEFAULT_ORDER_SOURCE_WAIT_MS = 10 * 60_000;

/** How often a lost reservation race is decided again before the message is retried instead. */
const MAX_DECISIONS = 5;

type KernelStep = Step<KernelNext>;

/** The state a message starts in: the shell loads the claim it names and gives it as the first observation. */
export function kernelStart(message: ProposalMessage, delivery: { finalAttempt?: boolean } = {}): KernelState {
  return { at: "claim", message, finalAttempt: delivery.finalAttempt === true };
}

/** The kernel's next step for a message on the answer to what it asked last. */
export function decideKernel(state: KernelState, observed: Observation, policy: KernelPolicy): KernelStep {
  if (observed.kind === "failed") {
    if (!FAILING_STATES.has(state.at)) throw new Error(`decideKernel: a failure answered ${state.at}`);
    return ask({ kind: "now" }, { ...claimed(state as Claimed), at: "failure_time", failure: observed });
  }
  switch (state.at) {
    case "claim":
      return claimLoaded(state, observedAs(observed, "claim").claim, policy);
    case "verdict":
      return verdictLoaded(state, observedAs(observed, "verdict").verdict);
    case "decision_time": {
      const now = observedAs(observed, "now").now;
      const orderId = proposedOrderId(state.message.proposal);
      if (!orderId) return decide(state, now, { order: undefined }, undefined, undefined, policy);
      return askObserving({ kind: "order", orderId }, { ...claimed(state), at: "order", now });
    }
    case "order": {
      const { order, absentFrom } = observedAs(observed, "order");
      if (!order)
        return decide(state, state.now, { order, ...(absentFrom ? { absentFrom } : {}) }, undefined, undefined, policy);
      const ledger = { kind: "ledger", orderId: order.order_id, scope: state.record.simulation_id } as const;
      return askObserving(ledger, { ...claimed(state), at: "ledger", now: state.now, order });
    }
    case "ledger": {
      const ledgerEntry = observedAs(observed, "ledger").entry;
      const { now, order } = state;
      // The window of the order's customer, read only when the contract has customer limits and the order a customer.
      if (!policy.agent.contract.customer_limits || order.customer_id === undefined)
        return decide(state, now, { order }, ledgerEntry, undefined, policy);
      const window = {
        kind: "customer_window",
        customerId: order.customer_id,
        scope: state.record.simulation_id,
      } as const;
      return askObserving(window, { ...claimed(state), at: "customer_window", now, order, ledgerEntry });
    }
    case "customer_window": {
      const window = observedAs(observed, "customer_window").window;
      return decide(state, state.now, { order: state.order }, state.ledgerEntry, window, policy);
    }
    case "stored": {
      const settling = { ...claimed(state), foundStored: false, decidedOrder: state.decidedOrder };
      return settle(settling, observedAs(observed, "store_verdict").verdict);
    }
    case "execution_time":
      return execution(state, observedAs(observed, "now").now, policy);
    case "refund_order":
      return reserveOn(state, observedAs(observed, "order").order, policy);
    case "customer_reserved": {
      const { result } = observedAs(observed, "reserve_customer");
      if (result.ok) return reserve(state, true);
      const ledger = { kind: "ledger", orderId: state.refund.order_id, scope: state.record.simulation_id } as const;
      return askObserving(ledger, { ...reserving(state), at: "refused_entry", refused: result });
    }
    case "refused_entry": {
      const { refused } = state;
      const entry = observedAs(observed, "ledger").entry ?? emptyLedgerEntry(state.refund.order_id);
      const result: ReserveResult = { ok: false, code: refused.code, message: refused.message, entry };
      return reservationAnswered(state, result, refused.window, policy);
    }
    case "reserved": {
      const { result } = observedAs(observed, "reserve");
      if (!state.customer) return reservationAnswered(state, result, undefined, policy);
      // A reservation on the customer's window whose refund is not made is released.
      if (!result.ok && result.code !== "ALREADY_REFUNDED_FOR_CLAIM") {
        const { order, record } = state;
        const release = {
          kind: "release_customer",
          customerId: order.customer_id!,
          claimId: record.claim_id,
          scope: record.simulation_id,
        } as const;
        return askObserving(release, { ...reserving(state), at: "customer_released", result });
      }
      return windowAfter(state, result);
    }
    case "customer_released":
      observedAs(observed, "release_customer");
      return windowAfter(state, state.result);
    case "window_after":
      return reservationAnswered(state, state.result, observedAs(observed, "customer_window").window, policy);
    case "recorded":
      return publication(state, observedAs(observed, "record_execution").verdict, state.foundStored);
    case "publication":
      return published(state, state.stored, decidePublication(state.publication, observed));
    case "approval": {
      const { review } = observedAs(observed, "review");
      const decided = { done: { outcome: "DECIDED", verdict: state.stored } } as const;
      // A reviewer approved the escalation before the claim was recorded DECIDED (its `executed` update found the
      // claim still RUNNING): the approval recorded by now is the claim's refund.
      if (review?.status !== "APPROVED") return { effects: [], next: decided };
      return { effects: approvedEscalationEffects(state.record.claim_id), next: decided };
    }
    case "failure_time":
      return failed(state, state.failure, observedAs(observed, "now").now, policy);
  }
}

/** The states waiting for a request asked with `failureObserved` (`askObserving`): the only ones `failed` may answer. */
const FAILING_STATES: ReadonlySet<KernelState["at"]> = new Set([
  "order",
  "ledger",
  "customer_window",
  "refund_order",
  "customer_reserved",
  "refused_entry",
  "reserved",
  "customer_released",
  "window_after",
  "recorded",
] as const);

function ask(awaiting: Request, state: KernelState): KernelStep {
  return { effects: [], next: { awaiting, state } };
}

/** Asks, deciding on a failure of the order source or its data (answered `failed`): the reads and writes of deciding and executing. */
function askObserving(awaiting: Request, state: KernelState): KernelStep {
  return { effects: [], next: { awaiting, state, failureObserved: "order" } };
}

function done(outcome: KernelOutcome): KernelStep {
  return { effects: [], next: { done: outcome } };
}

function retry(reason: string): KernelStep {
  return { effects: [], next: { done: { retry: reason } } };
}

/** The message and its claim, without what a state added. */
function claimed({ message, finalAttempt, record, key }: Claimed): Claimed {
  return { message, finalAttempt, record, key };
}

function settling(s: Settling): Settling {
  return { ...claimed(s), foundStored: s.foundStored, decidedOrder: s.decidedOrder };
}

function reserving(s: Reserving): Reserving {
  const { now, limitCents, current, raced, round, refund, order, orderCents, lines } = s;
  return { ...settling(s), now, limitCents, current, raced, round, refund, order, orderCents, lines };
}

/** The claim must exist and belong to the message's decision flow; then its verdict, stored once per key, is read. */
function claimLoaded(state: Delivered, record: ClaimRecord | undefined, policy: KernelPolicy): KernelStep {
  const { message, finalAttempt } = state;
  if (!record || record.dfid !== message.dfid)
    return done({ outcome: "REFUSED", reason: `no claim ${message.claim_id} in decision flow ${message.dfid}` });
  const key = idempotencyKeyOf(message.proposal, record.dfid, policy.sha256);
  return ask({ kind: "verdict", key }, { at: "verdict", message, finalAttempt, record, key });
}

/** A verdict stored for the key settles on (a redelivery); none: a claim awaiting a decision is decided now. */
function verdictLoaded(state: Claimed, stored: StoredVerdict | undefined): KernelStep {
  const { record, key } = state;
  if (stored && stored.claim_id !== record.claim_id)
    return done({ outcome: "REFUSED", reason: `proposal ${key.slice(0, 16)}… belongs to claim ${stored.claim_id}` });
  if (stored) return settle({ ...claimed(state), foundStored: true, decidedOrder: undefined }, stored);
  if (record.status !== "RUNNING" || !record.claim)
    return done({
      outcome: "REFUSED",
      reason: `claim ${record.claim_id} is ${record.status}, not awaiting a decision`,
    });
  return ask({ kind: "now" }, { ...claimed(state), at: "decision_time" });
}

/** Decides on the stored claim against the order, its ledger entry and the customer's window; stores it once. */
function decide(
  state: Claimed,
  now: number,
  read: { order: Order | undefined; absentFrom?: "shop_api" },
  ledgerEntry: LedgerEntry | undefined,
  customerWindow: CustomerWindow | undefined,
  policy: KernelPolicy,
): KernelStep {
  const { record, message } = state;
  const { order } = read;
  const decidedAt = new Date(now).toISOString();
  let decision;
  try {
    const at = { order, ledgerEntry, customerWindow, decidedAt, now };
    decision = decideProposal(
      record,
      message.proposal,
      read.absentFrom ? { ...at, orderAbsentFrom: read.absentFrom } : at,
      policy,
    );
  } catch (error) {
    return orderDataFailure(state, error);
  }
  const verdict = verdictToStore(state.key, record.claim_id, decision);
  return ask({ kind: "store_verdict", verdict }, { ...claimed(state), at: "stored", decidedOrder: order });
}

/** A PENDING verdict is executed first (from its instant, read now); a settled one is published. */
function settle(state: Settling, stored: StoredVerdict): KernelStep {
  if (stored.execution === "PENDING") return ask({ kind: "now" }, { ...settling(state), at: "execution_time", stored });
  return publication(state, stored, state.foundStored);
}

/** Reserves an ACCEPT's refund: the automatic limit from the contract, then the first round. */
function execution(state: Settling & { stored: StoredVerdict }, now: number, policy: KernelPolicy): KernelStep {
  const limit = parseCents(policy.agent.contract.max_refund_without_escalation);
  if (!limit.ok)
    return orderDataFailure(state, new KernelInputError(`contract.max_refund_without_escalation: ${limit.message}`));
  const first = { ...settling(state), now, limitCents: limit.cents, current: state.stored, raced: [], round: 0 };
  return round(first, policy);
}

/**
 * One reservation round of the current decision (at most MAX_DECISIONS, then the message is retried): on the order
 * decided on when it is the refund's (the reservation uses the same facts instead of reading the source again),
 * else on the order read now.
 */
function round(state: Omit<Round, "refund">, policy: KernelPolicy): KernelStep {
  const { record, current } = state;
  if (state.round >= MAX_DECISIONS)
    return retry(
      `claim ${record.claim_id}: the refund kept losing reservation races (${MAX_DECISIONS} decisions); the message is retried`,
    );
  const refund = plannedRefund(current, state.message.proposal, record.claim_id);
  if (!refund) return retry(`verdict ${current.record.verdict_id} is PENDING but plans no refund`);
  const { now, limitCents, raced } = state;
  const next: Round = { ...settling(state), now, limitCents, current, raced, round: state.round, refund };
  if (state.decidedOrder?.order_id === refund.order_id) return reserveOn(next, state.decidedOrder, policy);
  return askObserving({ kind: "order", orderId: refund.order_id }, { ...next, at: "refund_order" });
}

/** Reserves on the customer's window first (when the contract has customer limits and the order a customer). */
function reserveOn(state: Round, order: Order | undefined, policy: KernelPolicy): KernelStep {
  const { record } = state;
  // The ledger counts the order's currency in its minor units (cents for EUR, yen for JPY, fils for KWD).
  const bounds = order ? orderBoundsOf(order, state.refund.amount_eur, policy) : undefined;
  if (!order || !bounds)
    return orderDataFailure(
      state,
      new OrderDataError(`order ${state.refund.order_id} vanished or is corrupt between decision and execution`),
    );
  const refund = { ...state.refund, amount_cents: bounds.amountMinor };
  const { now, current, raced } = state;
  const limitCents = bounds.limitMinor ?? state.limitCents;
  const base = { ...settling(state), now, limitCents, current, raced, round: state.round, refund };
  // On an order with lines, the ledger keeps the claim's line (and every line) at most what was paid for it.
  // A proposal that named lines reserves exactly on them, as the kernel decided it (core/kernel/claim-lines.ts).
  const claim = record.claim && claimAsProposed(record.claim, state.message.proposal);
  const lines = lineReserveOf(order, claim, refund.amount_cents, policy.agent.contract);
  const next: Reserving = { ...base, order, orderCents: bounds.orderMinor, lines };
  const limits = bounds.customerLimits;
  if (!limits || order.customer_id === undefined) return reserve(next, false);
  // The reservation is stamped with the decision's instant.
  const request: CustomerReserveRequest = {
    customerId: order.customer_id,
    reservation: {
      claim_id: record.claim_id,
      order_id: refund.order_id,
      cents: refund.amount_cents,
      at: current.record.decided_at,
      ...(bounds.currency === "EUR" ? {} : { currency: bounds.currency }),
    },
    limits,
    scope: record.simulation_id,
  };
  return askObserving({ kind: "reserve_customer", request }, { ...next, at: "customer_reserved" });
}

/** The order's ledger: one conditional update, automatic, bounded by the escalation limit. */
function reserve(state: Reserving, customer: boolean): KernelStep {
  const { refund, record } = state;
  const request: ReserveRequest = {
    orderId: refund.order_id,
    claimId: record.claim_id,
    cents: refund.amount_cents,
    orderCents: state.orderCents,
    mode: { kind: "automatic", limitCents: state.limitCents },
    currency: currencyFor(state.order),
    ...(state.lines ? { lines: state.lines } : {}),
    scope: record.simulation_id,
  };
  return askObserving({ kind: "reserve", request }, { ...reserving(state), at: "reserved", customer });
}

/** The customer's window as it stands after the reservation (what a decision again is made against). */
function windowAfter(state: Reserving, result: ReserveResult): KernelStep {
  const window = {
    kind: "customer_window",
    customerId: state.order.customer_id!,
    scope: state.record.simulation_id,
  } as const;
  return askObserving(window, { ...reserving(state), at: "window_after", result });
}

/**
 * What the ledger's answer settles (`afterReservation`): the execution recorded (EXECUTED, REFUSED, or a decision
 * again that is not an ACCEPT, replacing the unpublished one), or another round for a decision again still an ACCEPT.
 */
function reservationAnswered(
  state: Reserving,
  result: ReserveResult,
  customerWindow: CustomerWindow | undefined,
  policy: KernelPolicy,
): KernelStep {
  const { current, raced, record, refund, order, now } = state;
  let step;
  try {
    const proposal = state.message.proposal;
    step = afterReservation({ current, raced, record, proposal, refund, order, result, customerWindow, now }, policy);
  } catch (error) {
    return orderDataFailure(state, error);
  }
  if ("settled" in step) {
    const request = { kind: "record_execution", key: current.idempotency_key, outcome: step.settled } as const;
    return askObserving(request, { ...settling(state), at: "recorded" });
  }
  const { limitCents } = state;
  const again = { ...settling(state), now, limitCents, current: step.again, raced: step.raced, round: state.round + 1 };
  return round(again, policy);
}

/** Publishes the settled verdict and records the claim DECIDED (decide/publication.ts). */
function publication(state: Claimed, stored: StoredVerdict, foundStored: boolean): KernelStep {
  const proposal = state.message.proposal;
  return published(state, stored, startPublication(stored, state.record, { foundStored, proposal }));
}

/** Where a publication step leaves the kernel: asking on its behalf, or — published — the escalation's approval. */
function published(state: Claimed, stored: StoredVerdict, step: Step<PublicationNext>): KernelStep {
  const at = (publication: PublicationState): KernelState => ({
    ...claimed(state),
    at: "publication",
    stored,
    publication,
  });
  return within(step, at, () => {
    if (stored.execution === "REFUSED" || !stored.review) return done({ outcome: "DECIDED", verdict: stored });
    return ask({ kind: "review", claimId: state.record.claim_id }, { ...claimed(state), at: "approval", stored });
  });
}

/** Corrupt order data (thrown by the kernel on the order it was given) is decided as a failure of the order data. */
function orderDataFailure(state: Claimed, error: unknown): KernelStep {
  if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
  return ask(
    { kind: "now" },
    {
      ...claimed(state),
      at: "failure_time",
      failure: { kind: "failed", code: "ORDER_DATA_INVALID", message: error.message },
    },
  );
}

/**
 * A failure of the order source or its data, at `now`. Corrupt order data is a data problem for a person: the claim
 * ends in NEEDS_REVIEW and a review opens. A source that cannot answer: the claim waits (the message is retried
 * through the queue) until it has waited `orderSourceWaitMs` since its proposal was created, or the queue delivers
 * the message for the last time; then it ends NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE. Nothing is decided or stored
 * before that.
 */
function failed(
  state: Claimed,
  failure: Extract<Observation, { kind: "failed" }>,
  now: number,
  policy: KernelPolicy,
): KernelStep {
  const { record, message } = state;
  const { proposal } = message;
  if (failure.code === "ORDER_DATA_INVALID")
    return {
      effects: orderDataInvalid(record, failure.message, now, proposal),
      next: { done: { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_DATA_INVALID" } },
    };
  const since = proposalCreatedMs(proposal) ?? Date.parse(record.updated_at);
  const waitedMs = Math.max(0, now - since);
  const boundMs = policy.settings.orderSourceWaitMs ?? DEFAULT_ORDER_SOURCE_WAIT_MS;
  if (waitedMs < boundMs && !state.finalAttempt)
    return done({
      outcome: "RETRY",
      reason: `${failure.message} (waited ${Math.round(waitedMs / 1000)} s of ${boundMs / 1000} s)`,
    });
  return {
    effects: orderSourceUnavailable(record, failure.message, waitedMs, now, proposal),
    next: { done: { outcome: "NEEDS_REVIEW", reasonCode: failure.code } },
  };
}

/**
 * The order's refundable amount, the refund and the currency's limits in the order's minor units; undefined for a
 * garbled order or an amount its currency cannot hold. An EUR order's figures are its cents, as always.
 */
function orderBoundsOf(order: Order, amount: number, policy: KernelPolicy) {
  const reading = readOrder(order);
  if (!reading.ok) return undefined;
  const { view } = reading;
  const parsed = parseMoney(amount, view.currency);
  if (!parsed.ok || parsed.money.minor <= 0) return undefined;
  const contract = policy.agent.contract;
  const bounds = currencyPolicy(contract, view.currency);
  if (!bounds) return undefined;
  return {
    currency: view.currency,
    orderMinor: refundableOf(view, contract).minor,
    amountMinor: parsed.money.minor,
    /** The currency's escalation limit; undefined (EUR's flat limit, read once) for EUR. */
    limitMinor: view.currency === "EUR" ? undefined : bounds.limit.minor,
    customerLimits: bounds.customerLimits,
  };
}
