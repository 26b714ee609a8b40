// The payment provider of a function, from its environment: PAYMENT_PROVIDER (`simulated`, the default, or another
// provider of the registry, app/payment-provider.ts), its adapter (functions/composition/payment-providers.ts) built
// from the provider's declared secrets, read from their links (Resource.StripeApiKey: an SST secret on AWS,
// STRIPE_API_KEY locally), and its declared settings from the environment (STRIPE_API_BASE, tests).
import {
  LOCAL_PAYMENT_PROVIDER,
  PAYMENT_PROVIDER_NAMES,
  PAYMENT_PROVIDER_VAR,
  paymentProvider,
  paymentProviderNamed,
  paymentProviderVariable,
  secretsOf,
  settingsOf,
  webhookSecretLink,
} from "../../app/payment-provider.ts";
import type { PaymentProviderName, ProviderSecretLink } from "../../app/payment-provider.ts";
import type { PaymentDeps, PaymentProvider } from "../../pipeline/payments.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../../core/kernel/review.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { ConfigLoadError } from "./errors.ts";
import { paymentAdapter } from "./payment-providers.ts";
import type { LinkedResources } from "./resources.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The provider PAYMENT_PROVIDER names (an empty one is unset: `simulated`); ConfigLoadError for an unknown one. */
export function paymentProviderNameFrom(env: Env): PaymentProviderName {
  const raw = paymentProviderVariable(env) ?? LOCAL_PAYMENT_PROVIDER;
  const provider = paymentProviderNamed(raw);
  if (!provider)
    throw new ConfigLoadError(
      `${PAYMENT_PROVIDER_VAR} must be one of ${PAYMENT_PROVIDER_NAMES.join(", ")}, got "${raw}"`,
    );
  return provider.name;
}

/** The provider PAYMENT_PROVIDER names, built by its adapter from its declared secrets and settings; ConfigLoadError for an unknown one. */
export function paymentProviderFrom(env: Env, resources: LinkedResources): PaymentProvider {
  const name = paymentProviderNameFrom(env);
  const declared = paymentProvider(name);
  const links = Object.fromEntries(secretsOf(declared).map((s) => [s.role, s.secret.link as ProviderSecretLink]));
  const settings = Object.fromEntries(
    settingsOf(declared).map((s) => [s.role, env[s.setting.env]?.trim() || undefined]),
  );
  return paymentAdapter(name).createPort({
    secret: (role) => {
      const link = links[role];
      if (link === undefined) throw new ConfigLoadError(`payment provider ${name} declares no secret "${role}"`);
      return resources.secret(link);
    },
    settings,
  });
}

/**
 * The signing secret of `provider`'s webhooks, read from its link on use; undefined when `provider` is not the one
 * PAYMENT_PROVIDER names in `env` (or has no webhook): its route is not served here.
 */
export function webhookSecretFrom(env: Env, resources: LinkedResources): (provider: string) => string | undefined {
  return (provider) => {
    const configured = paymentProviderNameFrom(env);
    const link = provider === configured ? webhookSecretLink(configured) : undefined;
    return link === undefined ? undefined : resources.secret(link);
  };
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
