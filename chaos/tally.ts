// Totals over a chaos run: faults injected by kind, what the model, the payment provider and the clients did, how
// the claims and their refunds ended.
import { FAULT_KINDS } from "./plan.ts";
import { emptyPaymentCounts } from "./payment-provider.ts";
import type { PaymentFaultCounts } from "./payment-provider.ts";
import type { FaultKind } from "./plan.ts";
import type { LlmCounts } from "./chaos-llm.ts";
import { emptyReturnCounts } from "./returns.ts";
import type { ReturnCounts } from "./returns.ts";
import { emptyOutcomeCounts } from "./outcomes.ts";
import type { OutcomeCounts } from "./outcomes.ts";

/** The payment side of a flow: the provider's faults, the money it paid, the failed refunds and their reviews. */
export interface PaymentTotals extends PaymentFaultCounts {
  /** Payouts the provider actually made. */
  payouts: number;
  /** Executions the provider refused (RefundFailed), at once or late. */
  refundsFailed: number;
  /** Failed refunds' reviews decided RETRY / CLOSE. */
  retried: number;
  closed: number;
  /** Messages an operator moved back from the refund executor's DLQ. */
  redriven: number;
}

/** Payment totals of nothing (a flow without a payment provider). */
export const emptyPaymentTotals = (): PaymentTotals => ({
  ...emptyPaymentCounts(),
  payouts: 0,
  refundsFailed: 0,
  retried: 0,
  closed: 0,
  redriven: 0,
});

/** The counts of one flow, which add up over a run. */
export interface FlowTotals {
  faults: Record<FaultKind, number>;
  llm: LlmCounts;
  deadLetters: number;
  clientRetries: number;
  reviewDecisions: number;
  deliveries: number;
  sweeps: number;
  claims: number;
  decided: number;
  needsReview: number;
  refunds: number;
  payments: PaymentTotals;
  /** The returns asked, the events the warehouse posted, how the returns ended (chaos/returns.ts). */
  returns: ReturnCounts;
  /** Store credits the provider issued, exchanges asked (chaos/outcomes.ts). */
  outcomes: OutcomeCounts;
}

/** Totals over a run. */
export interface Tally extends FlowTotals {
  flows: number;
  failedFlows: number;
  violations: number;
  /** Flows that suffered each fault at least once. */
  flowsWith: Record<FaultKind, number>;
}

/** An empty tally. */
export function createTally(): Tally {
  const zero = () => Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  return {
    flows: 0,
    failedFlows: 0,
    violations: 0,
    flowsWith: zero(),
    faults: zero(),
    llm: { calls: 0, slow: 0, hang: 0, fail: 0, garble: 0 },
    deadLetters: 0,
    clientRetries: 0,
    reviewDecisions: 0,
    deliveries: 0,
    sweeps: 0,
    claims: 0,
    decided: 0,
    needsReview: 0,
    refunds: 0,
    payments: emptyPaymentTotals(),
    returns: emptyReturnCounts(),
    outcomes: emptyOutcomeCounts(),
  };
}

/** Adds one flow's counts and violations. */
export function addToTally(t: Tally, flow: { counts: FlowTotals; violations: readonly string[] }): void {
  const c = flow.counts;
  t.flows++;
  if (flow.violations.length > 0) t.failedFlows++;
  t.violations += flow.violations.length;
  for (const k of FAULT_KINDS) {
    t.faults[k] += c.faults[k];
    if (c.faults[k] > 0) t.flowsWith[k]++;
  }
  for (const k of ["calls", "slow", "hang", "fail", "garble"] as const) t.llm[k] += c.llm[k];
  for (const k of [
    "deadLetters",
    "clientRetries",
    "reviewDecisions",
    "deliveries",
    "sweeps",
    "claims",
    "decided",
    "needsReview",
    "refunds",
  ] as const)
    t[k] += c[k];
  for (const k of Object.keys(t.payments) as (keyof PaymentTotals)[]) t.payments[k] += c.payments[k];
  for (const k of Object.keys(t.returns) as (keyof ReturnCounts)[]) t.returns[k] += c.returns[k];
  for (const k of Object.keys(t.outcomes) as (keyof OutcomeCounts)[]) t.outcomes[k] += c.outcomes[k];
}

/** The run's summary, a few lines. */
export function formatTally(t: Tally, seconds: number): string {
  const p = t.payments;
  const r = t.returns;
  const faults = FAULT_KINDS.map((k) => `${k} ${t.faults[k]} (${t.flowsWith[k]} flows)`).join(", ");
  return [
    `faults injected: ${faults}`,
    `model: ${t.llm.calls} calls, ${t.llm.slow} slow, ${t.llm.hang} hung past the function timeout, ${t.llm.fail} failed, ${t.llm.garble} garbled`,
    `claims: ${t.claims} (${t.decided} decided, ${t.needsReview} in review), ${t.refunds} refunds; ${t.reviewDecisions} review requests, ${t.clientRetries} client retries after a crash`,
    `payments: ${p.calls} provider calls (${p.replays} answered from their idempotency key), ${p.timeoutsBefore + p.timeoutsAfter} timed out (${p.timeoutsAfter} after the provider did the work); ${p.payouts} payouts; ${p.late} refunds pending first (${p.lateFailed} failed later); ${p.refundsFailed} refunds failed (${p.refusedAtOnce} refused at once); ${p.retried} retried, ${p.closed} closed; webhooks ${p.webhooks} (${p.duplicateWebhooks} duplicated, ${p.staleWebhooks} stale, ${p.forgedWebhooks} forged); ${p.redriven} redriven from the DLQ`,
    `returns: ${r.asked} asked; ${r.posted} events posted (${r.late} after the deadline, ${r.repeats} repeats answered RECORDED, ${r.refused} refused as no longer awaited); ${r.paid} paid on pay_on, ${r.released} released at the deadline, ${r.reviewed} sent to a person`,
    `outcomes: ${t.outcomes.credits} store credits issued, ${t.outcomes.exchanges} exchanges`,
    `deliveries: ${t.deliveries}${t.sweeps >= 0 ? `, sweeps ${t.sweeps}` : ""}, messages to a DLQ ${t.deadLetters}`,
    `time: ${seconds.toFixed(1)} s (${t.flows > 0 ? ((seconds * 1000) / t.flows).toFixed(1) : "0"} ms per flow); ${t.failedFlows} failing flow(s)`,
  ].join("\n");
}
