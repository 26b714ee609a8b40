// A payment provider for the chaos flows: a model of Stripe's refunds behind the production payment-provider port,
// driven by the flow's seeded rng. It keeps Stripe's idempotency-key semantics — the first call under a key does the
// work and every later call under that key answers the stored first response and moves no money — and it fails the
// ways a real provider does: a refund refused at once (an expired card, insufficient funds), a call that times out
// before or after the provider did the work, and a refund that is pending first and settles (or fails) later, told
// through webhooks that may come twice, or with a stale `pending` after the final word. Its book is what the money
// invariants count: every refund it created and every payout it actually made.
import type Stripe from "stripe";
import { settlementOfStripeRefund } from "../adapters/payments/stripe.ts";
import { PaymentUnavailableError } from "../pipeline/payments.ts";
import type { PaymentProvider, ProviderRefundRequest, ProviderRefundResult } from "../pipeline/payments.ts";
import type { PaymentPlan } from "./plan.ts";
import type { Rng } from "./rng.ts";

/** Stripe's refund statuses the model uses. */
export type StripeRefundStatus = "pending" | "succeeded" | "failed";

/** A refund the provider created (one per idempotency key, unless the double is broken). */
export interface ProviderRefund {
  readonly id: string;
  /** The idempotency key it was created under (the execution id). */
  readonly key: string;
  readonly claimId: string;
  readonly orderId: string;
  readonly paymentRef: string | undefined;
  readonly amountMinor: number;
  /** Store credit (`issueCredit`: its amount is the base plus the bonus), not cash back to the card. */
  readonly credit?: true;
  status: StripeRefundStatus;
  failureReason?: string;
}

/** Money the provider actually sent back to a customer. */
export interface ProviderPayout {
  readonly refundId: string;
  readonly key: string;
  readonly claimId: string;
  readonly orderId: string;
  readonly amountMinor: number;
  /** Store credit issued (the base plus the bonus), not cash. */
  readonly credit?: true;
  readonly at: number;
}

/** What the provider holds at the end of a flow: the invariants read it. */
export interface ProviderBook {
  readonly refunds: readonly ProviderRefund[];
  readonly payouts: readonly ProviderPayout[];
}

/** A webhook the provider sends: Stripe's event as JSON, to deliver at `at` (simulated ms). */
export interface ProviderWebhook {
  readonly at: number;
  readonly payload: string;
  readonly kind: "final" | "duplicate" | "stale" | "forged";
}

/** What the provider's faults did (the report counts them). */
export interface PaymentFaultCounts {
  calls: number;
  /** Calls answered from the stored response of their idempotency key. */
  replays: number;
  timeoutsBefore: number;
  /** Calls that timed out after the provider did the work (the answer is lost, the refund exists). */
  timeoutsAfter: number;
  refusedAtOnce: number;
  late: number;
  lateFailed: number;
  webhooks: number;
  duplicateWebhooks: number;
  staleWebhooks: number;
  forgedWebhooks: number;
}

/** The faulty provider, its book and the webhooks it has to send. */
export interface FaultyProvider {
  readonly provider: PaymentProvider;
  readonly book: ProviderBook;
  readonly counts: PaymentFaultCounts;
  /** Called for each webhook the provider will send (the flow puts it on its agenda). */
  onWebhook?: (webhook: ProviderWebhook) => void;
  /** Called for each pending refund: `settle` moves its money (or fails it) at `at` (the flow puts it on its agenda). */
  onSettle?: (at: number, settle: () => void) => void;
}

/** Deliberately broken variants, for the tests that show the invariants catch them. */
export interface ProviderBugs {
  /** Every call creates (and pays) a new refund: a provider, or a client, that loses the idempotency key. */
  ignoreIdempotencyKey?: boolean;
  /** Answers `failed` for a refund it paid (a failed refund that is money paid). */
  failAfterPaying?: boolean;
  /** Pays more than asked (one euro more). */
  overpay?: boolean;
}

/** Stripe's refund failure reasons the model draws from. */
const FAILURE_REASONS = ["expired_or_canceled_card", "insufficient_funds", "lost_or_stolen_card", "declined"] as const;

export const emptyPaymentCounts = (): PaymentFaultCounts => ({
  calls: 0,
  replays: 0,
  timeoutsBefore: 0,
  timeoutsAfter: 0,
  refusedAtOnce: 0,
  late: 0,
  lateFailed: 0,
  webhooks: 0,
  duplicateWebhooks: 0,
  staleWebhooks: 0,
  forgedWebhooks: 0,
});

/** The provider of a flow: `plan` says how it fails, `rng` draws each call's fate, `now` is the flow's clock. */
export function createFaultyProvider(opts: {
  plan: PaymentPlan;
  rng: Rng;
  now: () => number;
  bugs?: ProviderBugs;
}): FaultyProvider {
  const { plan, rng, now } = opts;
  const bugs = opts.bugs ?? {};
  const refunds: ProviderRefund[] = [];
  const payouts: ProviderPayout[] = [];
  const stored = new Map<string, ProviderRefundResult>();
  const counts = emptyPaymentCounts();
  let events = 0;

  const event = (type: string, refund: ProviderRefund, status: StripeRefundStatus, at: number): string =>
    JSON.stringify({
      id: `evt_chaos_${++events}`,
      object: "event",
      type,
      api_version: "2025-01-27.acacia",
      created: Math.floor(at / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: refund.key },
      data: {
        object: {
          id: refund.id,
          object: "refund",
          amount: refund.amountMinor,
          currency: "eur",
          status,
          ...(status === "failed" ? { failure_reason: refund.failureReason ?? "declined" } : {}),
          metadata: { claim_id: refund.claimId, execution_id: refund.key, order_id: refund.orderId },
          payment_intent: refund.paymentRef ?? null,
        },
      },
    });
  const pay = (refund: ProviderRefund) =>
    payouts.push({
      refundId: refund.id,
      key: refund.key,
      claimId: refund.claimId,
      orderId: refund.orderId,
      amountMinor: refund.amountMinor + (bugs.overpay ? 100 : 0),
      ...(refund.credit ? { credit: true as const } : {}),
      at: now(),
    });
  const send = (at: number, payload: string, kind: ProviderWebhook["kind"]) => {
    counts.webhooks++;
    if (kind === "duplicate") counts.duplicateWebhooks++;
    if (kind === "stale") counts.staleWebhooks++;
    if (kind === "forged") counts.forgedWebhooks++;
    faulty.onWebhook?.({ at, payload, kind });
  };
  /** The webhooks of a refund's final word at `at`: maybe twice, maybe followed by a stale `pending`, maybe forged. */
  const announce = (refund: ProviderRefund, at: number) => {
    const final = event(refund.status === "failed" ? "refund.failed" : "refund.updated", refund, refund.status, at);
    send(at, final, "final");
    if (rng.chance(plan.duplicateWebhook)) send(at + rng.int(0, 3_600_000), final, "duplicate");
    if (rng.chance(plan.staleWebhook))
      send(at + rng.int(1, 600_000), event("refund.updated", refund, "pending", at - 1), "stale");
    if (rng.chance(plan.forgedWebhook))
      send(at + rng.int(1, 600_000), event("refund.updated", refund, "succeeded", at), "forged");
  };

  const create = (request: ProviderRefundRequest, credit: boolean): ProviderRefundResult => {
    const refund: ProviderRefund = {
      id: `re_chaos_${refunds.length + 1}`,
      key: request.executionId,
      claimId: request.claimId,
      orderId: request.orderId,
      paymentRef: request.paymentRef,
      amountMinor: request.amountMinor,
      ...(credit ? { credit: true as const } : {}),
      status: "succeeded",
    };
    refunds.push(refund);
    const fate = rng.chance(plan.fail) ? "refused" : rng.chance(plan.pending) ? "late" : "paid";
    if (fate === "refused") {
      counts.refusedAtOnce++;
      refund.status = "failed";
      refund.failureReason = rng.pick(FAILURE_REASONS);
      if (rng.chance(0.5)) announce(refund, now() + rng.int(100, 60_000));
    } else if (fate === "late") {
      counts.late++;
      refund.status = "pending";
      const failsLater = rng.chance(plan.lateFail);
      if (failsLater) counts.lateFailed++;
      const reason = rng.pick(FAILURE_REASONS);
      const settleAt = now() + rng.int(1_000, plan.maxSettleMs);
      // The money moves (or the refund fails) when the provider settles it; the webhook tells the app.
      faulty.onSettle?.(settleAt, () => {
        if (failsLater) {
          refund.status = "failed";
          refund.failureReason = reason;
        } else {
          refund.status = "succeeded";
          pay(refund);
        }
        announce(refund, settleAt);
      });
    } else {
      pay(refund);
      if (rng.chance(plan.paidWebhook ?? 0.3)) announce(refund, now() + rng.int(100, 60_000));
    }
    // Stripe's refund object as the SDK returns it, read by the production adapter's mapping.
    const lie = bugs.failAfterPaying === true && fate === "paid";
    return settlementOfStripeRefund({
      id: refund.id,
      status: lie ? "failed" : refund.status,
      failure_reason: (lie ? "declined" : (refund.failureReason ?? null)) as Stripe.Refund["failure_reason"],
    });
  };

  /** A refund or a credit: the same faults (timeouts before or after the work, refusals, late settling) and keys. */
  const call = (request: ProviderRefundRequest, credit: boolean): ProviderRefundResult => {
    const what = credit ? "credit" : "refund";
    counts.calls++;
    // The request never reached the provider: a timeout, a 5xx, a connection reset.
    if (rng.chance(plan.timeout * (1 - plan.timeoutAfterWork))) {
      counts.timeoutsBefore++;
      throw new PaymentUnavailableError(`chaos provider: ${what} ${request.executionId} timed out before Stripe`);
    }
    let answer = bugs.ignoreIdempotencyKey ? undefined : stored.get(request.executionId);
    if (answer) counts.replays++;
    else {
      answer = create(request, credit);
      stored.set(request.executionId, answer);
    }
    // The provider did the work, but its answer was lost on the way back.
    if (rng.chance(plan.timeout * plan.timeoutAfterWork)) {
      counts.timeoutsAfter++;
      throw new PaymentUnavailableError(`chaos provider: ${what} ${request.executionId} timed out after Stripe`);
    }
    return answer;
  };
  const provider: PaymentProvider = {
    name: "stripe",
    needsPaymentRef: true,
    async refund(request) {
      return call(request, false);
    },
    // Store credit (docs/payments.md#store-credit): the amount asked is the base plus the bonus; it fails, settles
    // late and replays under its execution id exactly as a refund does.
    async issueCredit(request) {
      return call(request, true);
    },
  };
  const faulty: FaultyProvider = {
    provider,
    book: { refunds, payouts },
    counts,
  };
  return faulty;
}
