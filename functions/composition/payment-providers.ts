// The payment providers' adapters, by name (docs/payments.md#adding-a-payment-provider): the constructive half of
// the registry whose declarative half is app/payment-provider.ts. Each name of the registry has exactly its
// adapter here, whose inputs are the secrets and settings its declaration names and which verifies webhooks
// exactly when the declaration has a webhook route: the types refuse anything else.
import { simulatedPayments } from "../../adapters/payments/simulated.ts";
import { stripePayments } from "../../adapters/payments/stripe.ts";
import type { PaymentProviderName, PaymentProviderOf } from "../../app/payment-provider.ts";
import type { PaymentAdapter } from "../../pipeline/payments.ts";

/** The adapter a declaration needs: its name, built from its declared roles, with a verifier iff it has a webhook. */
type AdapterFor<D extends { readonly name: string; readonly secrets: object; readonly settings: object }> =
  PaymentAdapter<Extract<keyof D["secrets"], string>, Extract<keyof D["settings"], string>> & {
    readonly name: D["name"];
  } & (D extends { readonly webhook: object }
      ? { readonly readWebhook: NonNullable<PaymentAdapter["readWebhook"]> }
      : { readonly readWebhook?: never });

/** Every provider's adapter. */
export const PAYMENT_ADAPTERS = {
  simulated: simulatedPayments,
  stripe: stripePayments,
} as const satisfies { readonly [N in PaymentProviderName]: AdapterFor<PaymentProviderOf<N>> };

/** The adapter of `name`, as the generic shape the composition root builds from. */
export function paymentAdapter(name: PaymentProviderName): PaymentAdapter {
  return PAYMENT_ADAPTERS[name] as PaymentAdapter;
}
