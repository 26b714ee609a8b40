// Kernel service: decide a proposal once per idempotency key, from the STORED claim (never a queue
// message's copy), and publish only the final verdict (docs/kernel.md):
//   1. the claim must exist, belong to the message's decision flow and await a decision (RUNNING);
//   2. the decision is stored once per key (conditional put), not yet published;
//   3. an ACCEPT reserves its refund with one conditional update (automatic: bounded per order by the
//      escalation limit, refused while another claim on the order awaits review); if the reservation loses
//      a race, the kernel decides again against the ledger it now sees, and that decision replaces the
//      unpublished one — so every ClaimVerdict ACCEPT has exactly one RefundExecuted and the reverse;
//   4. the audit is appended, an ESCALATE opens its review, the events are published, the claim is recorded
//      DECIDED with the verdict — which proves the publication (a verdict whose claim does not take it is marked
//      published on its own item instead). Every step is repaired by a redelivery; no step needs a transaction.
// Corrupt order data ends the claim in NEEDS_REVIEW ORDER_DATA_INVALID instead of a kernel that throws forever. An
// order source that cannot answer (the shop's API down, slow or garbled) is an outage, not a customer outcome: the
// message is retried until the claim has waited `orderSourceWaitMs`, then the claim ends NEEDS_REVIEW
// ORDER_SOURCE_UNAVAILABLE (docs/orders.md).
import { emptyLedgerEntry, parseCents, type CustomerWindow, type ReserveResult } from "../core/kernel/index.ts";
import { KernelRetryError, OrderSourceUnavailableError } from "./errors.ts";
import { DEFAULT_ORDER_SOURCE_WAIT_MS } from "./deps.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { idempotencyKeyOf, KernelInputError, OrderDataError } from "../core/integrity/index.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import type { PipelineDeps } from "./deps.ts";
import {
  afterReservation,
  approvedEscalationEffects,
  decidedEffects,
  decideProposal,
  orderDataInvalid,
  orderSourceUnavailable,
  plannedRefund,
  proposalCreatedMs,
  proposedOrderId,
  publishEffects,
  verdictToStore,
} from "./decide/kernel-decision.ts";
import type { ProposalMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";
import type { StoredVerdict } from "./ports.ts";
import type { Decision } from "./decide/kernel-decision.ts";
import { verdictPublished } from "./decide/publication.ts";

/** What the kernel did with a proposal message. */
type KernelOutcome =
  | { outcome: "DECIDED"; verdict: StoredVerdict }
  | { outcome: "NEEDS_REVIEW"; reasonCode: string }
  /** The order source could not answer and the claim may still wait: retry the message later. Nothing was decided. */
  | { outcome: "RETRY"; reason: string }
  /** Not acted on: an unknown claim, another decision flow, or a claim not awaiting a decision. Nothing was written. */
  | { outcome: "REFUSED"; reason: string };

/** How often a lost reservation race is decided again before the message is retried instead. */
const MAX_DECISIONS = 5;

/** What the kernel service runs with. */
export type KernelDeps = Pick<
  PipelineDeps,
  | "verdicts"
  | "orders"
  | "ledger"
  | "claims"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "agent"
  | "registry"
  | "reviews"
  | "sha256"
  | "settings"
>;

/** How the message is delivered: `finalAttempt` when the queue will not deliver it again (its last receive). */
type KernelDelivery = { finalAttempt?: boolean };

/** Handles one proposal message. */
export async function handleProposal(
  message: ProposalMessage,
  deps: KernelDeps,
  delivery: KernelDelivery = {},
): Promise<KernelOutcome> {
  const record = await deps.claims.getClaim(message.claim_id);
  if (!record || record.dfid !== message.dfid)
    return { outcome: "REFUSED", reason: `no claim ${message.claim_id} in decision flow ${message.dfid}` };
  const key = idempotencyKeyOf(message.proposal, record.dfid, deps.sha256);
  let stored = await deps.verdicts.getVerdict(key);
  const foundStored = stored !== undefined;
  if (stored && stored.claim_id !== record.claim_id)
    return { outcome: "REFUSED", reason: `proposal ${key.slice(0, 16)}… belongs to claim ${stored.claim_id}` };

  // The order this delivery decided on: the reservation uses the same facts instead of reading the source again.
  let decidedOrder: Order | undefined;
  if (!stored) {
    if (record.status !== "RUNNING" || !record.claim)
      return { outcome: "REFUSED", reason: `claim ${record.claim_id} is ${record.status}, not awaiting a decision` };
    const now = deps.clock.now();
    const decidedAt = new Date(now).toISOString();
    let decision: Decision;
    try {
      decidedOrder = await orderOf(message.proposal, deps);
      const ledgerEntry = decidedOrder ? await deps.ledger.get(decidedOrder.order_id, record.simulation_id) : undefined;
      const customerWindow = await customerWindowOf(decidedOrder, record, deps);
      decision = decideProposal(
        record,
        message.proposal,
        { order: decidedOrder, ledgerEntry, customerWindow, decidedAt, now },
        deps,
      );
    } catch (error) {
      if (error instanceof OrderSourceUnavailableError)
        return waitForOrders(record, message.proposal, error, delivery, deps);
      if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
      return needsReviewFor(record, message.proposal, error, deps);
    }
    stored = await deps.verdicts.putVerdictOnce(verdictToStore(key, record.claim_id, decision));
  }

  if (stored.execution === "PENDING") {
    try {
      stored = await execute(stored, record, message.proposal, deps, decidedOrder);
    } catch (error) {
      if (error instanceof OrderSourceUnavailableError)
        return waitForOrders(record, message.proposal, error, delivery, deps);
      if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
      return needsReviewFor(record, message.proposal, error, deps);
    }
  }

  // The claim is recorded DECIDED with the proposal it decided, in the same write.
  await publishAndRecordDecided(stored, record, deps, { foundStored, proposal: message.proposal });
  if (stored.execution !== "REFUSED") {
    // A reviewer may have approved the escalation before the claim was recorded DECIDED (its `executed` update found
    // the claim still RUNNING): the approval recorded by now is the claim's refund.
    if (stored.review && (await deps.reviews.getReview(record.claim_id))?.status === "APPROVED")
      await performEffects(approvedEscalationEffects(record.claim_id), deps);
  }
  return { outcome: "DECIDED", verdict: stored };
}

/**
 * Publishes a settled verdict unless it was published already (`verdictPublished`: marked, or its claim recorded
 * DECIDED with it), then records the claim DECIDED with it (not for a REFUSED execution). The claim's update is
 * the proof of publication, so in the normal path the verdict item is not written again; a verdict published here
 * whose claim did not take it (REFUSED, or the claim moved on: a sweep, a review) is marked published on its item.
 * A crash between the publish and the claim's update leaves neither: the redelivery publishes the same entries
 * again (at least once, never lost). The kernel's update carries the `proposal` it decided. A verdict this
 * delivery found stored (`foundStored`: a redelivery) has its claim read again first, so a publication another
 * delivery proved since this one read the claim is not repeated.
 * The decision's audit is stored with the verdict, so whichever delivery publishes it appends it (a crash loses
 * none, a race adds none).
 */
export async function publishAndRecordDecided(
  stored: StoredVerdict,
  claim: ClaimRecord,
  deps: Pick<KernelDeps, "claims" | "verdicts" | "audit" | "publisher" | "reviews" | "ledger" | "queues" | "clock">,
  { foundStored, proposal }: { foundStored: boolean; proposal?: unknown },
): Promise<void> {
  let publishedHere = false;
  const proven = async () =>
    verdictPublished(stored, claim) ||
    (foundStored && verdictPublished(stored, await deps.claims.getClaim(stored.claim_id)));
  if (!(await proven())) {
    await performEffects(publishEffects(stored), deps);
    publishedHere = true;
  }
  let taken = false;
  if (stored.execution !== "REFUSED")
    for (const effect of decidedEffects(stored, deps.clock.now(), proposal)) {
      if (effect.kind !== "claim_update") await performEffects([effect], deps);
      else {
        const { changed } = await deps.claims.updateClaim(effect.claimId, effect.patch, effect.onlyFrom);
        taken ||= changed && effect.patch.status === "DECIDED" && effect.patch.verdict_id === stored.record.verdict_id;
      }
    }
  if (publishedHere && !taken) await deps.verdicts.markPublished(stored.idempotency_key);
}

/** The window of the order's customer, read only when the contract has customer limits and the order a customer. */
async function customerWindowOf(
  order: Order | undefined,
  record: ClaimRecord,
  deps: Pick<KernelDeps, "agent" | "ledger">,
): Promise<CustomerWindow | undefined> {
  if (!deps.agent.contract.customer_limits || order?.customer_id === undefined) return undefined;
  return deps.ledger.getCustomerWindow(order.customer_id, record.simulation_id);
}

async function orderOf(proposal: unknown, deps: Pick<KernelDeps, "orders">): Promise<Order | undefined> {
  const orderId = proposedOrderId(proposal);
  return orderId ? deps.orders.getOrder(orderId) : undefined;
}

/**
 * Reserves an ACCEPT's refund. On success the verdict settles EXECUTED with its RefundExecuted; when the
 * reservation loses a race, the kernel decides again (same decision instant) against the entry the ledger
 * returned, until the decision is not an ACCEPT (it replaces the unpublished one) or a reservation holds.
 */
async function execute(
  stored: StoredVerdict,
  record: ClaimRecord,
  proposal: unknown,
  deps: KernelDeps,
  decidedOrder: Order | undefined,
): Promise<StoredVerdict> {
  const now = deps.clock.now();
  const limit = parseCents(deps.agent.contract.max_refund_without_escalation);
  if (!limit.ok) throw new KernelInputError(`contract.max_refund_without_escalation: ${limit.message}`);
  let current = stored;
  let raced: AuditEvent[] = [];
  for (let round = 0; round < MAX_DECISIONS; round++) {
    const refund = plannedRefund(current, proposal, record.claim_id);
    if (!refund) throw new KernelRetryError(`verdict ${current.record.verdict_id} is PENDING but plans no refund`);
    const order =
      decidedOrder?.order_id === refund.order_id ? decidedOrder : await deps.orders.getOrder(refund.order_id);
    const orderCents = order ? parseCents(order.amount) : undefined;
    if (!order || !orderCents?.ok)
      throw new OrderDataError(`order ${refund.order_id} vanished or is corrupt between decision and execution`);
    // The customer's window first, then the order's ledger; a reservation on the window whose refund is not made is released.
    const customer = await reserveOnCustomerWindow(order, record, refund, current.record.decided_at, deps);
    if (customer && !customer.ok) {
      const entry = (await deps.ledger.get(refund.order_id, record.simulation_id)) ?? emptyLedgerEntry(refund.order_id);
      const refused: ReserveResult = { ok: false, code: customer.code, message: customer.message, entry };
      const step = afterReservation(
        { current, raced, record, proposal, refund, order, result: refused, customerWindow: customer.window, now },
        deps,
      );
      if ("settled" in step) return deps.verdicts.recordExecution(current.idempotency_key, step.settled);
      current = step.again;
      raced = step.raced;
      continue;
    }
    const result = await deps.ledger.reserve({
      orderId: refund.order_id,
      claimId: record.claim_id,
      cents: refund.amount_cents,
      orderCents: orderCents.cents,
      mode: { kind: "automatic", limitCents: limit.cents },
      scope: record.simulation_id,
    });
    if (customer && !result.ok && result.code !== "ALREADY_REFUNDED_FOR_CLAIM")
      await deps.ledger.releaseCustomer(order.customer_id!, record.claim_id, record.simulation_id);
    const customerWindow = customer
      ? await deps.ledger.getCustomerWindow(order.customer_id!, record.simulation_id)
      : undefined;
    const step = afterReservation(
      { current, raced, record, proposal, refund, order, result, customerWindow, now },
      deps,
    );
    if ("settled" in step) return deps.verdicts.recordExecution(current.idempotency_key, step.settled);
    current = step.again;
    raced = step.raced;
  }
  throw new KernelRetryError(
    `claim ${record.claim_id}: the refund kept losing reservation races (${MAX_DECISIONS} decisions); the message is retried`,
  );
}

/**
 * The order source cannot answer now. The claim waits (the message is retried through the queue) until it has
 * waited `orderSourceWaitMs` since its proposal was created, or the queue delivers the message for the last time;
 * then it ends NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE. Nothing is decided or stored before that.
 */
async function waitForOrders(
  record: ClaimRecord,
  proposal: unknown,
  error: OrderSourceUnavailableError,
  delivery: KernelDelivery,
  deps: KernelDeps,
): Promise<KernelOutcome> {
  const now = deps.clock.now();
  const since = proposalCreatedMs(proposal) ?? Date.parse(record.updated_at);
  const waitedMs = Math.max(0, now - since);
  const boundMs = deps.settings.orderSourceWaitMs ?? DEFAULT_ORDER_SOURCE_WAIT_MS;
  if (waitedMs < boundMs && !delivery.finalAttempt)
    return {
      outcome: "RETRY",
      reason: `${error.message} (waited ${Math.round(waitedMs / 1000)} s of ${boundMs / 1000} s)`,
    };
  await performEffects(orderSourceUnavailable(record, error.message, waitedMs, now, proposal), deps);
  return { outcome: "NEEDS_REVIEW", reasonCode: error.code };
}

/**
 * Reserves an automatic refund on the window of the order's customer when the contract has customer limits and the
 * order a customer (`undefined`: not bound). The reservation is stamped with the decision's instant.
 */
async function reserveOnCustomerWindow(
  order: Order,
  record: ClaimRecord,
  refund: { order_id: string; amount_cents: number },
  decidedAt: string,
  deps: Pick<KernelDeps, "agent" | "ledger">,
) {
  const limits = deps.agent.contract.customer_limits;
  if (!limits || order.customer_id === undefined) return undefined;
  return deps.ledger.reserveCustomer({
    customerId: order.customer_id,
    reservation: { claim_id: record.claim_id, order_id: refund.order_id, cents: refund.amount_cents, at: decidedAt },
    limits,
    scope: record.simulation_id,
  });
}

/** Corrupt order data is a data problem for a person: the claim ends in NEEDS_REVIEW and a review opens. */
async function needsReviewFor(
  record: ClaimRecord,
  proposal: unknown,
  error: Error,
  deps: KernelDeps,
): Promise<KernelOutcome> {
  await performEffects(orderDataInvalid(record, error.message, deps.clock.now(), proposal), deps);
  return { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_DATA_INVALID" };
}
