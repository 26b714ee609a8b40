// The simulated payment provider (PAYMENT_PROVIDER=simulated, the local default): every refund settles at once,
// with no network. Its reference is derived from the execution id, so a repeated call answers the same.
// It needs no payment_ref (it refunds no real payment) — except one it reads as a test case, the way Stripe's test
// payment methods decline: an order whose payment_ref is `sim_decline_<reason>` (e.g. `sim_decline_expired_card`)
// is refused with that reason, so a batch run or a local trial can open and decide a failed refund's review.
import type { PaymentAdapter, PaymentProvider, ProviderRefundResult } from "../../pipeline/payments.ts";

/** The payment_ref prefix the simulated provider refuses (docs/payments.md#the-simulated-provider). */
export const SIMULATED_DECLINE_PREFIX = "sim_decline_";

/** What the simulated provider answers for a refund of `paymentRef` under `executionId`. */
export function simulatedRefund(executionId: string, paymentRef: string | undefined): ProviderRefundResult {
  if (paymentRef?.startsWith(SIMULATED_DECLINE_PREFIX)) {
    const reason = paymentRef.slice(SIMULATED_DECLINE_PREFIX.length) || "declined";
    return { status: "FAILED", failureReason: `${reason} (simulated)` };
  }
  return { status: "SETTLED", providerRef: `sim_re_${executionId}` };
}

/** A provider that settles every refund at once (`sim_re_<execution id>`), but a `sim_decline_…` payment_ref's. */
export function createSimulatedPaymentProvider(): PaymentProvider {
  return {
    name: "simulated",
    needsPaymentRef: false,
    refund: async (request) => simulatedRefund(request.executionId, request.paymentRef),
    issueCredit: async (request) => simulatedCredit(request.executionId, request.paymentRef),
  };
}

/** What the simulated provider answers for store credit under `executionId`: `sim_cr_<execution id>` (or its decline). */
export function simulatedCredit(executionId: string, paymentRef: string | undefined): ProviderRefundResult {
  const answer = simulatedRefund(executionId, paymentRef);
  return answer.status === "SETTLED" ? { status: "SETTLED", providerRef: `sim_cr_${executionId}` } : answer;
}

/**
 * The simulated provider answering every refund as it answers an order whose payment_ref is `sim_decline_<reason>`:
 * how a batch run rehearses a decline for one of its refunds (its `payment:` step, docs/config.md), whatever the
 * order's own payment_ref and whatever provider is configured.
 */
export function createSimulatedDecline(reason: string): PaymentProvider {
  return {
    name: "simulated",
    needsPaymentRef: false,
    refund: async (request) => simulatedRefund(request.executionId, `${SIMULATED_DECLINE_PREFIX}${reason}`),
    issueCredit: async (request) => simulatedCredit(request.executionId, `${SIMULATED_DECLINE_PREFIX}${reason}`),
  };
}

/** The `simulated` provider's adapter (app/payment-providers/simulated.ts): no secrets, no settings, no webhook. */
export const simulatedPayments = {
  name: "simulated",
  createPort: () => createSimulatedPaymentProvider(),
} as const satisfies PaymentAdapter<never, never>;
