// The payment provider of a function, from its environment: PAYMENT_PROVIDER (`simulated`, the default, or
// `stripe`), Stripe's key from its link (Resource.StripeApiKey: an SST secret on AWS, STRIPE_API_KEY locally) and
// STRIPE_API_BASE to point the SDK at another endpoint (tests).
import { createSimulatedPaymentProvider } from "../../adapters/payments/simulated.ts";
import { createStripePaymentProvider } from "../../adapters/payments/stripe.ts";
import { PaymentProviderNameSchema } from "../../core/kernel/settlement.ts";
import type { PaymentProviderName } from "../../core/kernel/settlement.ts";
import { LINKS } from "../../app/manifest.ts";
import type { PaymentDeps, PaymentProvider } from "../../pipeline/payments.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../../core/kernel/review.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { ConfigLoadError } from "./errors.ts";
import type { LinkedResources } from "./resources.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The provider PAYMENT_PROVIDER names (an empty one is unset: `simulated`); ConfigLoadError for an unknown one. */
export function paymentProviderNameFrom(env: Env): PaymentProviderName {
  const raw = env.PAYMENT_PROVIDER?.trim() || "simulated";
  const name = PaymentProviderNameSchema.safeParse(raw);
  if (!name.success)
    throw new ConfigLoadError(
      `PAYMENT_PROVIDER must be one of ${PaymentProviderNameSchema.options.join(", ")}, got "${raw}"`,
    );
  return name.data;
}

/** The provider PAYMENT_PROVIDER names; ConfigLoadError for an unknown one. */
export function paymentProviderFrom(env: Env, resources: LinkedResources): PaymentProvider {
  if (paymentProviderNameFrom(env) === "simulated") return createSimulatedPaymentProvider();
  const base = env.STRIPE_API_BASE?.trim();
  return createStripePaymentProvider({
    apiKey: resources.secret(LINKS.stripeApiKey),
    ...(base ? { apiBase: base } : {}),
  });
}

/** The ports paying and recording use, from a function's dependencies. */
export function paymentDeps(deps: PipelineDeps): PaymentDeps {
  if (!deps.settlements || !deps.payments)
    throw new ConfigLoadError(
      "this function has no payment ports (settlements, payments): compose them (functions/composition/compose.ts)",
    );
  return {
    settlements: deps.settlements,
    provider: deps.payments,
    orders: deps.orders,
    publisher: deps.publisher,
    audit: deps.audit,
    clock: deps.clock,
    reviewDueMs: () => deps.agent.review?.dueMs ?? DEFAULT_REVIEW_DUE_MS,
  };
}
