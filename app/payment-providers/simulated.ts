// The simulated payment provider (docs/payments.md): the default locally, settles every refund at once with no
// network (adapters/payments/simulated.ts). No secrets, no settings, no webhook.
import type { PaymentProviderDeclaration } from "./declaration.ts";

export const simulated = {
  name: "simulated",
  description:
    "the default locally: settles every refund at once (`provider_ref` `sim_re_<execution_id>`), no network, no webhook — except for an order whose `payment_ref` is `sim_decline_<reason>` (e.g. `sim_decline_expired_card`), which it refuses with that reason, as Stripe's test payment methods decline: a way to try a failed refund's review (RETRY / CLOSE) on `claims serve` without Stripe. A batch run never pays (simulation refunds are never sent to a provider); its payment steps rehearse a decline with this provider ([below](#rehearsing-a-failed-refund-in-a-batch))",
  secrets: {},
  settings: {},
} as const satisfies PaymentProviderDeclaration;
