// The simulated payment provider (PAYMENT_PROVIDER=simulated, the local default): every refund settles at once,
// with no network. Its reference is derived from the execution id, so a repeated call answers the same.
import type { PaymentProvider } from "../../pipeline/payments.ts";

/** A provider that settles every refund at once (`sim_re_<execution id>`). */
export function createSimulatedPaymentProvider(): PaymentProvider {
  return {
    name: "simulated",
    refund: async (request) => ({ status: "SETTLED", providerRef: `sim_re_${request.executionId}` }),
  };
}
