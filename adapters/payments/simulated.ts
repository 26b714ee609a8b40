// The simulated payment provider (PAYMENT_PROVIDER=simulated, the local default): every refund settles at once,
// with no network. Its reference is derived from the execution id, so a repeated call answers the same.
// It needs no payment_ref (it refunds no real payment).
import type { PaymentAdapter, PaymentProvider } from "../../pipeline/payments.ts";

/** A provider that settles every refund at once (`sim_re_<execution id>`). */
export function createSimulatedPaymentProvider(): PaymentProvider {
  return {
    name: "simulated",
    needsPaymentRef: false,
    refund: async (request) => ({ status: "SETTLED", providerRef: `sim_re_${request.executionId}` }),
  };
}

/** The `simulated` provider's adapter (app/payment-providers/simulated.ts): no secrets, no settings, no webhook. */
export const simulatedPayments = {
  name: "simulated",
  createPort: () => createSimulatedPaymentProvider(),
} as const satisfies PaymentAdapter<never, never>;
