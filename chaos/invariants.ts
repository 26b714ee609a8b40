// The invariants every chaos flow must leave intact (docs/guarantees.md), checked on what the stores hold and the bus
// carried once the flow has drained, with its sweeps: no claim lost or stuck, one verdict per proposal, the money
// invariants (pipeline/testing/money-invariants.ts, ledgers included), the review marks on the ledger, the money the payment
// provider actually paid against the settlements (paymentViolations), and the audit complete — `claims replay`
// IDENTICAL for every final claim.
import { type LedgerEntry, parseCents } from "../core/kernel/index.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { isFinal } from "../core/kernel/claim-record.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import type { ReviewRecord } from "../core/kernel/review.ts";
import type {
  AuditEvent,
  ClaimsContract,
  CustomerLimits,
  Order,
  ResponsibilityContract,
} from "../core/integrity/index.ts";
import { checkMoneyInvariants, paidBackOver, unit, withAmountEur } from "../pipeline/testing/money-invariants.ts";
import type { MoneySummary, PublishedEvent } from "../pipeline/testing/money-invariants.ts";
import type { StoredVerdict } from "../pipeline/ports.ts";
import { verdictPublished } from "../pipeline/decide/publication.ts";
import { closeReleasesReservation } from "../core/kernel/settlement.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import { DAY_MS } from "../core/integrity/index.ts";
import { settlementDfid } from "../pipeline/payments.ts";
import type { ProviderBook } from "./payment-provider.ts";
import { orderTotalMajor, viewOrder } from "../core/kernel/order-view.ts";
import { parseMoney } from "../core/kernel/money.ts";

/** What a flow left behind. */
export interface FlowObservation {
  claims: readonly ClaimRecord[];
  verdicts: readonly StoredVerdict[];
  reviews: readonly ReviewRecord[];
  /** Every ledger entry of the flow's orders (scope: a simulation's ledger). */
  ledgers: readonly { scope?: string | undefined; entry: LedgerEntry }[];
  /** Everything published, repeats included. */
  events: readonly PublishedEvent[];
  /** Every audit event appended. */
  audit: readonly AuditEvent[];
  orders: readonly Order[];
  limitEur: number;
  /** The policy's bounds per currency (`claims_bounds.currencies`): an order in another currency is bounded by them. */
  currencies?: ClaimsContract["currencies"] | undefined;
  /** The contract's customer limits, when it has them: automatic refunds per customer (the order's) stay within. */
  customerLimits?: CustomerLimits | undefined;
  responsibility: ResponsibilityContract;
  /** With a payment provider: the settlements stored and the provider's own book (its refunds and payouts). */
  payments?: { settlements: readonly SettlementRecord[]; book: ProviderBook } | undefined;
}

/** The outcome of the checks: every violation, and the money totals. */
export interface InvariantResult {
  violations: string[];
  money: MoneySummary;
  replayed: number;
}

const group = <T>(items: readonly T[], key: (t: T) => string) => {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
  return map;
};

/** What each line of an order with lines was paid, in its currency's minor units (undefined for a one-line order). */
function linesPaid(order: Order | undefined): Record<string, number> | undefined {
  if (!order?.lines) return undefined;
  return Object.fromEntries(viewOrder(order).lines.map((l) => [l.line_id, l.amount.minor]));
}

/** `amount` (major units) of `order` in its currency's minor units; NaN when it is not that currency's money. */
function minorIn(order: Order, amount: number): number {
  const parsed = parseMoney(amount, order.currency ?? "EUR");
  return parsed.ok ? parsed.money.minor : Number.NaN;
}

/** Checks every invariant on `o`; returns the violations (empty when all hold). */
export function checkFlowInvariants(o: FlowObservation): InvariantResult {
  const violations: string[] = [];
  const reviews = new Map(o.reviews.map((r) => [r.claim_id, r]));
  const events = o.events.map(withAmountEur).filter((e) => typeof e.detail.claim_id === "string");
  const verdictIds = group(
    events.filter((e) => e.detailType === "ClaimVerdict"),
    (e) => String(e.detail.claim_id),
  );
  const stored = group(o.verdicts, (v) => v.claim_id);
  const claimIds = new Set(o.claims.map((c) => c.claim_id));

  // No claim lost or stuck.
  for (const c of o.claims) {
    if (!isFinal(c.status)) violations.push(`claim ${c.claim_id} is stuck in ${c.status}`);
    // The sweep's last resort (docs/local-stack.md): in a flow whose faults all pass, no nudge should ever fail to move a claim.
    if (c.status === "NEEDS_REVIEW" && c.reason_code === "STALLED")
      violations.push(`claim ${c.claim_id} is stuck: the sweep ended it STALLED (${c.reason ?? ""})`);
  }
  for (const e of events)
    if (!claimIds.has(String(e.detail.claim_id)))
      violations.push(`the bus carries ${e.detailType} for ${String(e.detail.claim_id)}, which is not stored`);

  // One verdict per proposal, and the published one is the claim's.
  for (const c of o.claims) {
    const ids = [...new Set((verdictIds.get(c.claim_id) ?? []).map((e) => String(e.detail.verdict_id)))];
    const mine = stored.get(c.claim_id) ?? [];
    for (const v of mine) {
      if (v.execution === "PENDING")
        violations.push(`claim ${c.claim_id}: stored verdict ${v.record.verdict_id} is still PENDING execution`);
      // Published: marked on its item, or proven by the claim recorded DECIDED with it (that update follows the publish).
      if (!verdictPublished(v, c) && isFinal(c.status))
        violations.push(`claim ${c.claim_id}: stored verdict ${v.record.verdict_id} was never published`);
    }
    if (c.status === "DECIDED") {
      if (ids.length !== 1 || ids[0] !== c.verdict_id)
        violations.push(
          `claim ${c.claim_id} (DECIDED ${c.verdict ?? "?"} ${c.verdict_id ?? "no id"}) has ClaimVerdict ids [${ids.join(", ")}] on the bus`,
        );
      const live = mine.filter((v) => v.execution !== "REFUSED");
      if (live.length !== 1 || live[0]!.record.verdict_id !== c.verdict_id)
        violations.push(
          `claim ${c.claim_id}: ${live.length} stored verdict(s) not superseded (${live.map((v) => v.record.verdict_id).join(", ")}), the claim records ${c.verdict_id ?? "none"}`,
        );
    } else if (c.status === "NEEDS_REVIEW" && ids.length > 0 && c.return?.outcome !== "REVIEW") {
      // (A claim whose return went to a person was ACCEPTed first: its ClaimVerdict stands, docs/returns.md.)
      violations.push(`claim ${c.claim_id} is NEEDS_REVIEW but the bus carries ClaimVerdict ${ids.join(", ")}`);
    }
  }

  // Reviews: one for every escalation and every NEEDS_REVIEW, none left half decided, and the ledger's marks match.
  for (const c of o.claims) {
    const review = reviews.get(c.claim_id);
    const needsOne = c.status === "NEEDS_REVIEW" || (c.status === "DECIDED" && c.verdict === "ESCALATE");
    if (needsOne && !review)
      violations.push(`claim ${c.claim_id} (${c.status}${c.verdict ? ` ${c.verdict}` : ""}) has no review`);
    if (review?.intent)
      violations.push(
        `review of claim ${c.claim_id} is stuck with an unfinished ${review.intent.decision} (the decision was claimed, never carried out)`,
      );
    if (review && review.status === "APPROVED" && c.executed !== true)
      violations.push(`claim ${c.claim_id}: its review is APPROVED but the claim says executed=${String(c.executed)}`);
  }
  const marked = new Map<string, string>();
  for (const { scope, entry } of o.ledgers)
    for (const claimId of entry.pending_reviews ?? [])
      marked.set(claimId, `${scope ? `${scope}|` : ""}${entry.order_id}`);
  for (const [claimId, where] of marked) {
    const review = reviews.get(claimId);
    if (review?.status !== "PENDING")
      violations.push(
        `the ledger of ${where} still marks claim ${claimId} as awaiting review, but its review is ${review?.status ?? "absent"}: automatic refunds on the order are blocked for good`,
      );
  }
  const holds = new Set(o.ledgers.flatMap(({ entry }) => Object.keys(entry.claims)));
  for (const r of o.reviews) {
    if (r.status === "PENDING" && r.order_id && !marked.has(r.claim_id) && !holds.has(r.claim_id))
      violations.push(
        `claim ${r.claim_id}'s review is PENDING but the ledger of ${r.order_id} does not mark it: automatic refunds on the order would go on`,
      );
  }

  // Returns (docs/returns.md): the events recorded for each claim, and how its return ended.
  const returnEvents = group(
    o.audit
      .filter((e) => e.event_type === "RETURN_EVENT_RECORDED")
      .map((e) => ({ claimId: String(e.details.claim_id), event: String(e.details.event) })),
    (e) => e.claimId,
  );
  violations.push(...returnOutcomeViolations(o, reviews));

  // Money, over the bus and the ledgers.
  const orderAmount = new Map(o.orders.map((x) => [x.order_id, orderTotalMajor(x)]));
  const byId = new Map(o.orders.map((x) => [x.order_id, x]));
  const money = checkMoneyInvariants(o.events, {
    orderAmountEur: (id) => orderAmount.get(id),
    limitEur: o.limitEur,
    currencyOf: (id) => byId.get(id)?.currency,
    limitIn: (currency) => o.currencies?.[currency]?.max_refund_without_escalation,
    linesOf: (id) => linesPaid(byId.get(id)),
    ledgers: o.ledgers.map(({ scope, entry }) => ({
      orderId: entry.order_id,
      scope,
      claims: entry.claims,
      lines: entry.line_cents,
    })),
    returnEvents: (claimId) => returnEvents.get(claimId),
    ...(o.customerLimits
      ? {
          customers: {
            customerOf: (id: string) => o.orders.find((x) => x.order_id === id)?.customer_id,
            limits: o.customerLimits,
          },
        }
      : {}),
  });
  violations.push(...money.violations);
  // A CLOSEd refund's reservation is released (the claim was executed, its money is not refunded), unless the CLOSE
  // says it was paid out of band: that one keeps its reservation (closeReleasesReservation).
  const closed = new Set(
    (o.payments?.settlements ?? []).filter((s) => closeReleasesReservation(s.review)).map((s) => s.claim_id),
  );
  for (const c of o.claims) {
    // An exchange keeps its line(s) reserved though nothing is executed (docs/returns.md#outcomes).
    const exchanged = c.status === "DECIDED" && c.outcome === "EXCHANGE";
    const held =
      (c.executed === true && !closed.has(c.claim_id)) || returnHeld(c, reviews.get(c.claim_id)) || exchanged;
    if (holds.has(c.claim_id) !== held)
      violations.push(
        `claim ${c.claim_id} says executed=${String(c.executed)}${closed.has(c.claim_id) ? " (its refund CLOSED)" : ""} but the ledger ${holds.has(c.claim_id) ? "holds" : "does not hold"} its refund`,
      );
  }
  if (o.payments) violations.push(...paymentViolations(o, o.payments));

  // The audit is complete: every final claim replays IDENTICAL, to the outcome its record shows.
  let replayed = 0;
  // A settlement's events (paying, failing, its RETRY / CLOSE) are a flow of their own, which `claims replay` does not
  // read (it reads the claim's decision flow by its DFID).
  const paymentFlows = new Set(o.claims.map((c) => settlementDfid(c.claim_id)));
  const decisionAudit = o.audit.filter((e) => !paymentFlows.has(e.dfid));
  for (const c of o.claims) {
    if (!isFinal(c.status)) continue;
    const review = reviews.get(c.claim_id);
    const result = replayClaim(c.claim_id, decisionAudit, {
      responsibility: o.responsibility,
      ...(review ? { review } : {}),
    });
    replayed++;
    // A claim whose return went to a person replays to the ACCEPT it was decided (its return flow replays apart).
    const expected = c.status === "NEEDS_REVIEW" && c.return?.outcome !== "REVIEW" ? "NEEDS_REVIEW" : c.verdict;
    if (result.status !== "IDENTICAL") {
      const bad = result.steps.filter((s) => s.status !== "IDENTICAL").map((s) => `${s.step}: ${s.detail}`);
      violations.push(`claims replay ${c.claim_id} is ${result.status}: ${bad.slice(0, 3).join(" | ")}`);
    } else if (result.outcome !== expected) {
      violations.push(`claims replay ${c.claim_id} ends ${result.outcome ?? "nowhere"}, the claim ${expected ?? "?"}`);
    }
  }
  return { violations, money, replayed };
}

/**
 * Whether a claim's return keeps its refund reserved though nothing is executed: while the claim awaits the item, and
 * while a failed inspection waits for a person (a DENY or a RESUBMIT releases it; the deadline released it already).
 */
function returnHeld(c: ClaimRecord, review: ReviewRecord | undefined): boolean {
  if (!c.return || c.executed === true) return false;
  if (c.status === "AWAITING_RETURN") return true;
  return c.reason_code === "RETURN_INSPECTION_FAILED" && c.status === "NEEDS_REVIEW" && review?.status === "PENDING";
}

/**
 * How each return ended, against the money: no claim is left awaiting its return once the flow drained past its
 * deadlines; a return's own refund (its RefundExecuted without a person's approval) went out only for a claim whose
 * return ended PAID and that says executed — never for one the deadline closed (RETURN_NOT_RECEIVED) or a person got.
 */
function returnOutcomeViolations(o: FlowObservation, reviews: ReadonlyMap<string, ReviewRecord>): string[] {
  const violations: string[] = [];
  const paid = new Set(
    o.events
      .filter((e) => e.detailType === "RefundExecuted" && e.detail.approved_by === undefined)
      .map((e) => `${String(e.detail.claim_id)}|${String(e.detail.execution_id)}`),
  );
  for (const c of o.claims) {
    if (!c.return) continue;
    if (c.status === "AWAITING_RETURN")
      violations.push(`claim ${c.claim_id} still awaits its return (due ${c.return.return_by}) after the flow drained`);
    if (!paid.has(`${c.claim_id}|${c.return.execution_id}`)) continue;
    if (c.return.outcome !== "PAID" || c.executed !== true)
      violations.push(
        `claim ${c.claim_id}: its return's refund went out, but the return ended ${c.return.outcome ?? "nowhere"} (${c.status}${c.reason_code ? ` ${c.reason_code}` : ""}, executed=${String(c.executed)}, review ${reviews.get(c.claim_id)?.status ?? "none"})`,
      );
  }
  return violations;
}

const centsOf = (eur: unknown): number => {
  const c = parseCents(eur);
  return c.ok ? c.cents : Number.NaN;
};

/**
 * The money the provider actually moved, against what the app authorised and recorded: a failed refund is not money
 * paid and a settled one is; every settlement and every provider call names a RefundExecuted (never a simulation's)
 * and asks no more than it authorised; the provider paid at most once per claim; a CLOSEd refund is not refunded; a
 * RETRY names a failed execution; what the provider paid per order stays within the order, automatic payouts within
 * the escalation limit and the customer limits; and no refund is left PENDING once the flow drained.
 */
export function paymentViolations(
  o: FlowObservation,
  payments: { settlements: readonly SettlementRecord[]; book: ProviderBook },
): string[] {
  const violations: string[] = [];
  const { settlements, book } = payments;
  const executed = new Map<string, Record<string, unknown>>();
  for (const e of o.events.map(withAmountEur))
    if (e.detailType === "RefundExecuted" && !executed.has(String(e.detail.execution_id)))
      executed.set(String(e.detail.execution_id), e.detail);
  // Store credit is paid as the base plus its bonus (docs/returns.md#outcomes): the bonus is not money the customer
  // paid, so what counts against the authorised amount, the order and the limits is the base.
  const bonusOf = (key: string): number => {
    const d = executed.get(key);
    const bonus = (d?.credit as { bonus?: { value?: unknown; currency?: unknown } } | undefined)?.bonus;
    if (!d || !bonus) return 0;
    const parsed = parseMoney(bonus.value, String(bonus.currency), { strings: true });
    return parsed.ok ? parsed.money.minor : Number.NaN;
  };
  const payouts = book.payouts.map((p) => (p.credit ? { ...p, amountMinor: p.amountMinor - bonusOf(p.key) } : p));
  for (const p of book.payouts) {
    const d = executed.get(p.key);
    if (!d) continue;
    if (Boolean(p.credit) !== (d.credit !== undefined))
      violations.push(
        `the provider paid ${p.key} of claim ${p.claimId} as ${p.credit ? "store credit" : "cash"}, but ${d.credit ? "store credit" : "a refund"} was authorised`,
      );
  }
  const paidBy = group(payouts, (p) => p.key);
  const paidCents = (key: string) => (paidBy.get(key) ?? []).reduce((sum, p) => sum + p.amountMinor, 0);

  // Each execution a settlement records (the current one and earlier attempts), with its status.
  const recorded = settlements.flatMap((s) => [
    { s, execution_id: s.execution_id, status: s.status },
    ...s.attempts.map((a) => ({ s, execution_id: a.execution_id, status: a.status })),
  ]);
  for (const { s, execution_id, status } of recorded) {
    const authorised = executed.get(execution_id);
    if (!authorised)
      violations.push(`the settlement of claim ${s.claim_id} names ${execution_id}, which no RefundExecuted announced`);
    else if (authorised.claim_id !== s.claim_id || centsOf(authorised.amount_eur) !== centsOf(s.amount_eur))
      violations.push(
        `the settlement of claim ${s.claim_id} does not match RefundExecuted ${execution_id} (claim or amount)`,
      );
    const paid = paidCents(execution_id);
    if (status === "FAILED" && paid > 0)
      violations.push(
        `refund ${execution_id} of claim ${s.claim_id} is recorded FAILED, but the provider paid ${paid} cents under it: a failed refund is money paid`,
      );
    if (status === "SETTLED" && paid === 0)
      violations.push(
        `refund ${execution_id} of claim ${s.claim_id} is recorded SETTLED, but the provider paid nothing under it`,
      );
    if (status === "PENDING")
      violations.push(
        `refund ${execution_id} of claim ${s.claim_id} is still PENDING after the flow drained: nobody knows whether the customer was paid`,
      );
  }
  const settledClaims = new Set(settlements.map((s) => s.claim_id));
  for (const [id, d] of executed)
    if (d.simulation_id === undefined && !recorded.some((r) => r.execution_id === id))
      violations.push(
        `RefundExecuted ${id} of claim ${String(d.claim_id)} has no settlement${settledClaims.has(String(d.claim_id)) ? " (its claim's settlement names another execution)" : ""}: an authorised refund nobody paid`,
      );

  // Every call the provider got names an authorised, real execution and asks no more than it authorised.
  for (const r of book.refunds) {
    const authorised = executed.get(r.key);
    if (!authorised) {
      violations.push(`the provider refunded ${r.amountMinor} cents under ${r.key}, which no RefundExecuted announced`);
      continue;
    }
    if (authorised.simulation_id !== undefined)
      violations.push(`the provider was asked to pay ${r.key}, a simulation's refund`);
    if (authorised.claim_id !== r.claimId)
      violations.push(
        `the provider refund ${r.id} names claim ${r.claimId}, RefundExecuted ${r.key} claim ${String(authorised.claim_id)}`,
      );
  }
  for (const [key, list] of paidBy) {
    const authorised = executed.get(key);
    if (list.length > 1) violations.push(`the provider paid ${list.length} times under the idempotency key ${key}`);
    // The provider pays in the order's currency's minor units (JPY whole yen, KWD thousandths).
    const order = authorised && o.orders.find((x) => x.order_id === String(authorised.order_id));
    const allowed = authorised
      ? order
        ? minorIn(order, Number(authorised.amount_eur))
        : centsOf(authorised.amount_eur)
      : Number.NaN;
    if (authorised && !(paidCents(key) <= allowed))
      violations.push(
        `the provider paid ${paidCents(key)} ${unit(order?.currency ?? "EUR")} under ${key}, more than the ${allowed} authorised`,
      );
    // Store credit is issued exactly: the base authorised plus its bonus, never less.
    if (authorised?.credit !== undefined && list.length === 1 && paidCents(key) !== allowed)
      violations.push(
        `the provider issued store credit of ${paidCents(key) + bonusOf(key)} ${unit(order?.currency ?? "EUR")} under ${key}, not the base ${allowed} plus its bonus ${bonusOf(key)}`,
      );
  }
  // An exchange moves no money: the provider pays nothing for an exchanged claim.
  const exchanged = new Set(o.claims.filter((c) => c.outcome === "EXCHANGE").map((c) => c.claim_id));
  for (const p of payouts)
    if (exchanged.has(p.claimId)) violations.push(`claim ${p.claimId} was exchanged, but the provider paid ${p.key}`);
  for (const [claimId, list] of group(payouts, (p) => p.claimId))
    if (list.length > 1)
      violations.push(
        `the provider paid claim ${claimId} ${list.length} times (${list.map((p) => `${p.key}: ${p.amountMinor} cents`).join(", ")})`,
      );

  // A CLOSEd refund is not refunded by the provider (no payout for its claim); unless paid out of band, it holds no
  // reservation either and the ledger records it released, so it never reserves again (issue 39).
  const holds = new Set(o.ledgers.flatMap(({ scope, entry }) => (scope ? [] : Object.keys(entry.claims))));
  const released = new Set(o.ledgers.flatMap(({ scope, entry }) => (scope ? [] : (entry.released ?? []))));
  for (const s of settlements) {
    if (s.review?.status !== "CLOSED") continue;
    const paid = book.payouts.filter((p) => p.claimId === s.claim_id);
    if (paid.length > 0)
      violations.push(
        `claim ${s.claim_id}'s refund was CLOSED unpaid, but the provider paid it ${paid.map((p) => p.amountMinor).join(" + ")} cents`,
      );
    if (!closeReleasesReservation(s.review)) {
      if (!holds.has(s.claim_id))
        violations.push(
          `claim ${s.claim_id}'s refund was CLOSED as paid out of band, but the ledger of ${s.order_id} does not hold it`,
        );
      continue;
    }
    if (holds.has(s.claim_id))
      violations.push(
        `claim ${s.claim_id}'s refund was CLOSED, but the ledger of ${s.order_id} still holds its reservation`,
      );
    else if (s.review.performed && !released.has(s.claim_id))
      violations.push(
        `claim ${s.claim_id}'s refund was CLOSED, but the ledger of ${s.order_id} does not record it released: a repaired approval could reserve it again`,
      );
  }

  // A RETRY names a failed execution of the same claim: recorded FAILED, never paid.
  for (const [id, d] of executed) {
    if (d.retry_of === undefined) continue;
    const from = String(d.retry_of);
    const s = settlements.find((x) => x.claim_id === d.claim_id);
    const attempt = s?.attempts.find((a) => a.execution_id === from);
    if (attempt?.status !== "FAILED")
      violations.push(
        `RETRY ${id} of claim ${String(d.claim_id)} names ${from}, which its settlement does not record as a failed execution (${attempt?.status ?? "absent"})`,
      );
    if (paidCents(from) > 0)
      violations.push(`RETRY ${id} retries ${from}, which the provider paid: the claim is paid twice`);
  }

  // What the provider paid per order, and automatically, against the order and the limits.
  const rootOf = (id: string): Record<string, unknown> | undefined => {
    let d = executed.get(id);
    for (let n = 0; d?.retry_of !== undefined && n < 100; n++) d = executed.get(String(d.retry_of));
    return d;
  };
  const decidedAt = new Map(
    o.events
      .filter((e) => e.detailType === "ClaimVerdict")
      .map((e) => [String(e.detail.verdict_id), Date.parse(String(e.detail.decided_at))]),
  );
  const automatic: { customer?: string | undefined; at: number; cents: number }[] = [];
  for (const [orderId, list] of group(payouts, (p) => p.orderId)) {
    const order = o.orders.find((x) => x.order_id === orderId);
    // In the order's currency's minor units, as the provider pays (JPY whole yen, KWD thousandths): never across two.
    const currency = order?.currency ?? "EUR";
    const limitMajor = currency === "EUR" ? o.limitEur : o.currencies?.[currency]?.max_refund_without_escalation;
    const limit = order && limitMajor !== undefined ? minorIn(order, limitMajor) : 0;
    const total = list.reduce((sum, p) => sum + p.amountMinor, 0);
    const paid = order ? minorIn(order, orderTotalMajor(order)) : Number.NaN;
    if (!order) violations.push(`the provider paid ${total} cents on ${orderId}, an order that does not exist`);
    else {
      const over = paidBackOver({ cash: total }, paid);
      if (over !== undefined)
        violations.push(`the provider paid ${over} ${unit(currency)} on order ${orderId}, more than its ${paid}`);
    }
    let auto = 0;
    for (const p of list) {
      const root = rootOf(p.key);
      if (!root || root.approved_by !== undefined) continue;
      auto += p.amountMinor;
      // The customer limits checked here are EUR's (the flat ones); other currencies have their own.
      if (currency !== "EUR") continue;
      automatic.push({
        customer: order?.customer_id,
        at: decidedAt.get(String(root.verdict_id)) ?? Number.NaN,
        cents: p.amountMinor,
      });
    }
    if (auto > limit)
      violations.push(
        `the provider paid ${auto} cents automatically on order ${orderId}, more than the ${limit}-cent limit`,
      );
  }
  if (o.customerLimits) {
    const { window_days, max_automatic_refunds, max_automatic_eur } = o.customerLimits;
    for (const a of automatic) {
      if (a.customer === undefined) continue;
      const inWindow = automatic.filter(
        (b) => b.customer === a.customer && b.at <= a.at && b.at >= a.at - window_days * DAY_MS,
      );
      const total = inWindow.reduce((sum, b) => sum + b.cents, 0);
      if (inWindow.length > max_automatic_refunds || total > centsOf(max_automatic_eur)) {
        violations.push(
          `the provider paid customer ${a.customer} ${inWindow.length} automatic refunds (${total} cents) in a window, above customer_limits`,
        );
        break;
      }
    }
  }
  return violations;
}
