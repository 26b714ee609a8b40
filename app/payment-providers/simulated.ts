// The simulated payment provider (docs/payments.md): the default locally, settles every refund at once with no
// network (adapters/payments/simulated.ts). No secrets, no settings, no webhook.
import type { PaymentProviderDeclaration } from "./declaration.ts";

export const simulated = {
  name: "simulated",
  description:
    "the default locally: settles every refund at once (`provider_ref` `sim_re_<execution_id>`), no network, no webhook",
  secrets: {},
  settings: {},
} as const satisfies PaymentProviderDeclaration;
